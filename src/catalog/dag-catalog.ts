// What a listing of DAGs shows of each file (name, tags, group, schedule, params, problems), kept
// in memory: a file is read and parsed again only when its stamp (inode, size, times) moved, a
// write went through the store, or the directory watcher saw it change, so that a page of
// `GET /dags` parses no file that did not change. While the watcher runs, a listing stats only the
// files its page shows (1,500 stats a request were half the time of a page of 100), and each of
// them once per turn of the event loop: the listings a turn answers see the files as they were at
// its start (under load, a page's 100 stats had been a third of its main-thread time).
import type { Dag, DagStore, Schedule } from '../core/index.ts';
import type { ParseResult } from '../definition/index.ts';

/** The fields of a definition a DAG list item shows: a definition may weigh megabytes, this does not. */
export type DagListing = Pick<Dag, 'name' | 'description' | 'group' | 'tags' | 'params'> & { schedule: Pick<Schedule, 'start'> };

export interface CatalogEntry {
  fileName: string;
  /** Undefined when the file does not parse to a DAG. */
  dag?: DagListing;
  errors: string[];
  /** `fileName` lowercased, for the name filter and the order. */
  lowerName: string;
  /** `dag.tags` lowercased, for the tag filter. */
  lowerTags: string[];
}

interface Cached {
  path: string;
  stamp: string;
  entry: Promise<CatalogEntry | undefined>;
  /** The entry once read: a listing of unchanged files awaits nothing. */
  settled?: { value: CatalogEntry | undefined };
}

function listingOf(dag: Dag): DagListing {
  return { name: dag.name, description: dag.description, group: dag.group, tags: dag.tags, params: dag.params, schedule: { start: dag.schedule.start } };
}

export class DagCatalog {
  private readonly cached = new Map<string, Cached>();
  /** The previous answer: given again, the same array, while no entry changed (callers keep what they derive from it). */
  private last: CatalogEntry[] = [];
  /**
   * While the directory watcher runs, a file it has not reported changed is not stat'ed again on
   * every listing: only the entries a page shows are (`verify`). Without it every file is.
   */
  private watched = false;
  private rechecking = false;
  /**
   * While watched: the directory's stamp when `last` was made, and whether an entry was forgotten
   * since. Neither moved: `last` is the answer, with no directory read (1,500 entries a request
   * were most of a listing's time and garbage).
   */
  private lastDirectory: string | undefined;
  private forgotten = true;
  /** Entries a stat found current in this turn of the event loop (a write or a watcher's notice replaces an entry). */
  private readonly checked = new Set<Cached>();

  constructor(private readonly dags: DagStore, private readonly parseStored: (file: { fileName: string; text: string; path: string }) => Promise<ParseResult>) {
    dags.onWrite((fileName) => this.forget(fileName));
  }

  /** Told by the directory watcher and by writes: the file is read again when next listed. */
  forget(fileName: string): void {
    this.cached.delete(fileName);
    this.forgotten = true;
  }

  /** Told by the directory watcher whether it watches (it may give up, on a network file system). */
  setWatched(watched: boolean): void {
    this.watched = watched;
  }

  /** Told by the watcher's slow rescan, the safety net for a change it missed: the next listing stats every file. */
  recheck(): void {
    this.rechecking = true;
  }

  /**
   * Every DAG file's entry, in the order of the files' names; files gone meanwhile are left out.
   * While watched, the files are found anew only when the directory's stamp moved or the watcher or
   * a write told of a change, and those known are not checked (`verify` checks a page's).
   */
  async entries(): Promise<CatalogEntry[]> {
    const trusted = this.watched && !this.rechecking;
    // Taken before the directory is read: a change made meanwhile moves one of them, and the next listing looks again.
    const directory = this.dags.directoryStamp();
    if (trusted && !this.forgotten && directory !== undefined && directory === this.lastDirectory) return this.last;
    this.forgotten = false;
    this.rechecking = false;
    const paths = await this.dags.paths();
    for (const fileName of this.cached.keys()) if (!paths.has(fileName)) this.cached.delete(fileName);
    const found: Array<CatalogEntry | undefined | Promise<CatalogEntry | undefined>> = [];
    for (const [fileName, path] of paths) {
      const known = this.cached.get(fileName);
      if (trusted && known?.settled && known.path === path) found.push(known.settled.value);
      else {
        const stamp = this.dags.stamp(path);
        if (stamp !== undefined) found.push(this.entry(fileName, path, stamp));
      }
    }
    const entries = (found.some((entry) => entry instanceof Promise) ? await Promise.all(found) : found as Array<CatalogEntry | undefined>)
      .filter((entry) => entry !== undefined);
    // Stamped only once every entry is read: a listing whose reads are still pending is made again.
    this.lastDirectory = found.some((entry) => entry instanceof Promise) ? undefined : directory;
    if (entries.length === this.last.length && entries.every((entry, index) => entry === this.last[index])) return this.last;
    this.last = entries;
    return entries;
  }

  /**
   * Whether every one of `shown` is still what its file holds (a stat each, once per turn of the
   * event loop). False after reading again those that changed: the listing they came from is then
   * made again.
   */
  async verify(shown: readonly CatalogEntry[]): Promise<boolean> {
    if (!this.watched) return true;
    let current = true;
    for (const entry of shown) {
      const known = this.cached.get(entry.fileName);
      if (!known || this.checked.has(known)) continue;
      const stamp = this.dags.stamp(known.path);
      if (stamp === known.stamp) {
        if (this.checked.size === 0) setImmediate(() => this.checked.clear());
        this.checked.add(known);
        continue;
      }
      current = false;
      // Forgotten first: the listing made again must not be the one this entry came from.
      this.forget(entry.fileName);
      if (stamp !== undefined) await this.entry(entry.fileName, known.path, stamp);
    }
    return current;
  }

  private entry(fileName: string, path: string, stamp: string): CatalogEntry | undefined | Promise<CatalogEntry | undefined> {
    const known = this.cached.get(fileName);
    if (known && known.stamp === stamp && known.path === path) return known.settled ? known.settled.value : known.entry;
    const cached: Cached = { path, stamp, entry: this.load(fileName) };
    cached.entry.then(
      (value) => { cached.settled = { value }; },
      // A read that failed is tried again by the next listing.
      () => { if (this.cached.get(fileName) === cached) this.cached.delete(fileName); },
    );
    this.cached.set(fileName, cached);
    return cached.entry;
  }

  private async load(fileName: string): Promise<CatalogEntry | undefined> {
    const file = this.dags.readSync(fileName);
    if (!file) return undefined;
    const { dag, errors } = await this.parseStored(file);
    return {
      fileName, errors, dag: dag ? listingOf(dag) : undefined,
      lowerName: fileName.toLowerCase(), lowerTags: (dag?.tags ?? []).map((tag) => tag.toLowerCase()),
    };
  }
}
