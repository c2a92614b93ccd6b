// A Server-Sent Events client for the tests: a real HTTP connection (fetch), the stream parsed as
// the EventSource standard reads it (fields, blank-line dispatch, comment lines).
import { uncheckedFetch } from '../openapi-check.ts';

export interface SseMessage {
  /** `message` when the server named none. */
  event: string;
  data: string;
  id?: string;
  retry?: number;
}

export class SseClient {
  readonly messages: SseMessage[] = [];
  /** Comment lines (heartbeats), as received. */
  comments = 0;
  ended = false;
  private buffer = '';
  private waiters: Array<() => void> = [];
  private readonly abort = new AbortController();

  private constructor(readonly status: number, readonly headers: Headers, readonly errorBody: string | undefined) {}

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const abort = new AbortController();
    const response = await uncheckedFetch('an event stream is read as it comes; its refusals are checked by the tests that expect them', url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
    if (response.status !== 200) return new SseClient(response.status, response.headers, await response.text());
    const client = new SseClient(response.status, response.headers, undefined);
    client.abort.signal.addEventListener('abort', () => abort.abort());
    void client.read(response.body!);
    return client;
  }

  /** The parsed event data of every message of `event`'s kind so far (`data` as JSON). */
  events(): any[] {
    return this.messages.filter((message) => message.event !== 'reset' && message.event !== 'dropped' && message.data !== '').map((message) => JSON.parse(message.data));
  }

  /** Resolves once `check` holds for the messages received, or rejects after `timeoutMs`. */
  async until(check: (messages: SseMessage[]) => boolean, timeoutMs = 15_000): Promise<SseMessage[]> {
    const deadline = Date.now() + timeoutMs;
    while (!check(this.messages)) {
      if (this.ended) throw new Error(`the stream ended before the condition held; got ${JSON.stringify(this.messages.map((m) => m.event))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; got ${JSON.stringify(this.messages.map((m) => `${m.id}:${m.event}`))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
    return this.messages;
  }

  close(): void {
    this.abort.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const bytes of body) {
        this.buffer += decoder.decode(bytes, { stream: true });
        this.parse();
      }
    } catch {
      // Aborted by close(), or the server went.
    }
    this.ended = true;
    this.wake();
  }

  private parse(): void {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end < 0) break;
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const message: SseMessage = { event: 'message', data: '' };
      const data: string[] = [];
      let fields = 0;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        fields++;
        if (field === 'event') message.event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') message.id = value;
        else if (field === 'retry') message.retry = Number(value);
      }
      if (fields === 0) continue;
      message.data = data.join('\n');
      this.messages.push(message);
    }
    this.wake();
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
