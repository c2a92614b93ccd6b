// Server-Sent Events read as they come: text in, whole messages out (id, event type, data lines
// joined by line breaks). Comments (a server's heartbeat) and `retry:` carry nothing for a reader.

export interface SseMessage {
  /** The message's id, when it has one. */
  id?: string;
  /** `message` when the server names none. */
  event: string;
  data: string;
}

export class SseParser {
  private buffered = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];

  /** The messages `text` completes. */
  push(text: string): SseMessage[] {
    this.buffered += text;
    const messages: SseMessage[] = [];
    let start = 0;
    for (let newline = this.buffered.indexOf('\n'); newline >= 0; newline = this.buffered.indexOf('\n', start)) {
      let line = this.buffered.slice(start, newline);
      start = newline + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        const message = this.dispatch();
        if (message) messages.push(message);
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') this.id = value;
      else if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    this.buffered = this.buffered.slice(start);
    return messages;
  }

  private dispatch(): SseMessage | undefined {
    const { id, event, data } = this;
    this.id = undefined;
    this.event = '';
    this.data = [];
    if (data.length === 0 && event === '') return undefined;
    return { ...(id !== undefined ? { id } : {}), event: event || 'message', data: data.join('\n') };
  }
}
