// The events of DAG files changed by hand: an editor, `cp`, a deploy. The API tells its own changes
// as it makes them (created, updated, renamed, deleted); this module tells the others, from what
// the directory watcher notices, and from the rescan for what a watch misses. It remembers a digest
// of each file's content, so that a notice of a file the API just wrote, or of a file touched but
// not changed, tells nothing.
import { createHash } from 'node:crypto';
import { dagEvent, type DagStore, type EventBody } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';

/** A file known to exist whose content was not read yet (the files there at start). */
const UNREAD = '';

export class DagFileChanges {
  /** The files as last told, by name: the digest of their content, or UNREAD. */
  private readonly known = new Map<string, string>();
  /** Notices are checked one at a time: a slow read never tells an older content after a newer one. */
  private checking: Promise<void> = Promise.resolve();

  constructor(
    private readonly dags: DagStore,
    private readonly append: (events: EventBody[]) => Promise<void>,
  ) {
    // Inside the store's write, before it lets the next change of that file in: a notice of the
    // same change, read after it, finds nothing new.
    dags.onWrite((fileName) => this.wrote(fileName));
  }

  /** The files there now: a change of one of them is an update, a new one a creation. */
  async start(): Promise<void> {
    for (const fileName of await this.dags.fileNames()) if (!this.known.has(fileName)) this.known.set(fileName, UNREAD);
  }

  /** The watcher noticed a change of the file: its event, when its content is not what was last told. */
  noticed(fileName: string): Promise<void> {
    this.checking = this.checking.then(async () => {
      await this.dags.settled(fileName);
      const file = await this.dags.read(fileName).catch(() => undefined);
      this.tell(fileName, file === undefined ? undefined : digest(file.text));
    }).catch((error: unknown) => {
      log.warn({ dag: fileName, error: errorText(error) }, `DAG file ${fileName} changed, and could not be read to tell it`);
    });
    return this.checking;
  }

  /** The safety net for what a watch misses: files that came or went. */
  async rescan(): Promise<void> {
    let names: Set<string>;
    try {
      names = new Set(await this.dags.fileNames());
    } catch {
      // The directory could not be listed this time: nothing is known to have gone.
      return;
    }
    for (const fileName of this.known.keys()) if (!names.has(fileName)) await this.noticed(fileName);
    for (const fileName of names) if (!this.known.has(fileName)) await this.noticed(fileName);
  }

  private wrote(fileName: string): void {
    const file = this.dags.readSync(fileName);
    if (file === undefined) this.known.delete(fileName);
    else this.known.set(fileName, digest(file.text));
  }

  private tell(fileName: string, now: string | undefined): void {
    const before = this.known.get(fileName);
    if (now === before) return;
    let event: EventBody;
    if (now === undefined) {
      this.known.delete(fileName);
      event = dagEvent('deleted', fileName);
    } else {
      this.known.set(fileName, now);
      event = dagEvent(before === undefined ? 'created' : 'updated', fileName);
    }
    this.append([event]).catch((error: unknown) => {
      log.warn({ dag: fileName, error: errorText(error) }, `the event of DAG file ${fileName} changed by hand could not be stored`);
    });
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}
