// The stop messages of one container task: heard from the start (a stop may come while an image
// is pulled or a container created), then handed to whatever runs at the moment.
import type { ControlMessage, WorkerTask } from '../protocol.ts';

export class Stops {
  first: ControlMessage | undefined;
  private handler: ((message: ControlMessage) => void) | undefined;
  /** Aborted on the first stop: cancels a pull or a readiness wait under way. */
  readonly controller = new AbortController();
  private readonly listener = (message: ControlMessage) => {
    if (message.type !== 'stop') return;
    if (this.first === undefined) {
      this.first = message;
      this.controller.abort();
    }
    this.handler?.(message);
  };

  constructor(private readonly port: WorkerTask['port']) {
    port.on('message', this.listener);
  }

  get requested(): boolean {
    return this.first !== undefined;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** `handler` gets every stop from now on, and at once the one that came before, if any. */
  handle(handler: ((message: ControlMessage) => void) | undefined): void {
    this.handler = handler;
    if (handler && this.first) handler(this.first);
  }

  detach(): void {
    this.handler = undefined;
    this.port.off('message', this.listener);
  }
}

/** How a container task ended: its process exited, a stop ended it, or the daemon refused. */
export type Outcome =
  | { kind: 'exited'; exitCode: number }
  | { kind: 'stopped'; signal: string }
  | { kind: 'failed'; message: string };
