// The stop messages of one step's task: heard from the start (a stop may come before the process
// exists, or while an image is pulled or a session opens), kept, then handed to whatever runs at the
// moment. Shared by the shell, ssh and container executors.
import type { ControlMessage, WorkerTask } from './protocol.ts';

export class Stops {
  first: ControlMessage | undefined;
  private handler: ((message: ControlMessage) => void) | undefined;
  /** Made on first use: only executors that wait on something abortable (a pull) need one. */
  private controller: AbortController | undefined;
  private readonly listener = (message: ControlMessage) => {
    if (message.type !== 'stop') return;
    if (this.first === undefined) {
      this.first = message;
      this.controller?.abort();
    }
    this.handler?.(message);
  };

  constructor(private readonly port: WorkerTask['port']) {
    port.on('message', this.listener);
  }

  get requested(): boolean {
    return this.first !== undefined;
  }

  /** Aborted on the first stop: cancels a pull or a readiness wait under way. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.first) this.controller.abort();
    }
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
