// What a listing of DAGs shows of each file (name, tags, group, schedule, params, problems), kept
// in memory: a file is read and parsed again only when its stamp (inode, size, times) moved or the
// directory watcher saw it change, so that a page of `GET /dags` parses no file that did not change.
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

  constructor(private readonly dags: DagStore, private readonly parseStored: (file: { fileName: string; text: string; path: string }) => Promise<ParseResult>) {}

  /** Told by the directory watcher and by writes: the file is read again when next listed. */
  forget(fileName: string): void {
    this.cached.delete(fileName);
  }

  /** Every DAG file's entry, in the order of the files' names; files gone meanwhile are left out. */
  async entries(): Promise<CatalogEntry[]> {
    const stamps = await this.dags.stamps();
    for (const fileName of this.cached.keys()) if (!stamps.has(fileName)) this.cached.delete(fileName);
    const found = [...stamps].map(([fileName, stamp]) => this.entry(fileName, stamp));
    const entries = (found.some((entry) => entry instanceof Promise) ? await Promise.all(found) : found as Array<CatalogEntry | undefined>)
      .filter((entry) => entry !== undefined);
    if (entries.length === this.last.length && entries.every((entry, index) => entry === this.last[index])) return this.last;
    this.last = entries;
    return entries;
  }

  private entry(fileName: string, stamp: string): CatalogEntry | undefined | Promise<CatalogEntry | undefined> {
    const known = this.cached.get(fileName);
    if (known && known.stamp === stamp) return known.settled ? known.settled.value : known.entry;
    const cached: Cached = { stamp, entry: this.load(fileName) };
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
