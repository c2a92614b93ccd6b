// The definitions the engine and the API read: stored DAG files (each parsed once per change of its
// text), definitions checked before they are stored, and the call cycles they reach. Parses go
// through the DefinitionParser, which reads large texts on a worker thread: every read here is
// async, and the check that needs the DAG files (call cycles) runs on this thread after it.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError, dagNameProblem, type Dag, type DagFile, type DagStore } from '../core/index.ts';
import { usableDag } from './usable-dag.ts';
import { DagCatalog } from './dag-catalog.ts';
import { DefinitionParser, callCycles, callTargets, runProblems, type ParseResult, type ParsedFile } from '../definition/index.ts';

export interface LoadedDag {
  dag?: Dag;
  result: ParseResult;
  text: string;
  path: string;
}

/** DAG files looked for in one turn of the event loop (a stat each, a few microseconds). */
const LOOKUPS_PER_TURN = 256;

/** Running DAGs' texts kept parsed: the runs calling sub DAGs at one time; a 1 MiB text's parse weighs tens of MB. */
const RUNNING_KEPT = 4;

export class Definitions {
  private readonly parsed = new Map<string, { text: string; result: Promise<ParseResult> }>();
  /** By text, most recently used last: the oldest is the one dropped. */
  private readonly running = new Map<string, Promise<ParseResult>>();

  /** What DAG listings show of each stored file, parsed again only when the file changes. */
  readonly listing: DagCatalog;

  constructor(private readonly dags: DagStore, private readonly parser: DefinitionParser = new DefinitionParser()) {
    this.listing = new DagCatalog(dags, (file) => this.parseStored(file));
  }

  /** A stored DAG a run can use, with its text; 404 when there is none, 400 saying why it cannot run. */
  async runnable(fileName: string): Promise<{ dag: Dag; text: string }> {
    const loaded = await this.loadDag(fileName);
    if (!loaded) throw new AppError('not_found', `DAG ${fileName} not found`);
    return { dag: usableDag(loaded.result, await this.callCycles(fileName, loaded.result)), text: loaded.text };
  }

  /** A definition a request carries (an inline run) that a run can use; its name checked, or required. */
  /** `name` replaces the spec's own, or with `nameIfNone`, names a spec that has none. */
  async runnableInline(spec: unknown, name: string | undefined, { nameIfNone = false } = {}): Promise<Dag> {
    if (typeof spec !== 'string' || spec.trim() === '') throw new AppError('bad_request', 'spec is required');
    if (name !== undefined) {
      const problem = dagNameProblem(name);
      if (problem) throw new AppError('bad_request', problem);
    }
    const result = await this.parse(spec, nameIfNone ? { defaultName: name ?? '' } : { nameOverride: name, defaultName: '' });
    if (result.dag && result.dag.name === '' && name === undefined) throw new AppError('bad_request', 'DAG name is required');
    return usableDag(result, await this.callCycles(undefined, result));
  }

  /** Parses a stored DAG, reusing the last result while the file's text is unchanged. */
  async loadDag(fileName: string): Promise<LoadedDag | undefined> {
    if (dagNameProblem(fileName)) return undefined;
    const file = await this.dags.read(fileName);
    if (!file) return undefined;
    const result = await this.parseStored(file);
    return { dag: result.dag, result, text: file.text, path: file.path };
  }

  /** The parse of a stored DAG file; concurrent reads of one text share one parse. */
  parseStored(file: DagFile): Promise<ParseResult> {
    let cached = this.parsed.get(file.fileName);
    if (!cached || cached.text !== file.text) {
      const result = this.parser.parse(file.text, { fileName: file.fileName, baseDir: this.dags.dir });
      const entry = { text: file.text, result };
      // A parse that could not finish (the server closing) is not kept.
      result.catch(() => { if (this.parsed.get(file.fileName) === entry) this.parsed.delete(file.fileName); });
      cached = entry;
      this.parsed.set(file.fileName, cached);
    }
    return cached.result;
  }

  /**
   * The local DAGs of a running DAG's definition text, for the sub DAG runs it starts: a fan-out of
   * 100 items over a large definition would otherwise parse it 100 times. Concurrent calls share
   * one parse. The local DAGs depend on the text alone, not on the run's name.
   */
  localDags(specText: string): Promise<ParseResult['localDags']> {
    let result = this.running.get(specText);
    this.running.delete(specText);
    if (!result) {
      const fresh = this.parser.parse(specText, { baseDir: this.dags.dir });
      // A parse that could not finish (the server closing) is not kept.
      fresh.catch(() => { if (this.running.get(specText) === fresh) this.running.delete(specText); });
      result = fresh;
      if (this.running.size >= RUNNING_KEPT) this.running.delete(this.running.keys().next().value!);
    }
    this.running.set(specText, result);
    return result.then((parsed) => parsed.localDags);
  }

  /** A text parsed as it is given (inline runs, retries); no file is consulted. */
  parse(text: string, options: { nameOverride?: string; fileName?: string; defaultName?: string }): Promise<ParseResult> {
    return this.parser.parse(text, { ...options, baseDir: this.dags.dir });
  }

  /**
   * A definition as the API checks it before storing it: the parse, with the call cycles through the
   * stored DAG files. A call of a DAG that does not exist is accepted (DAGs may be created in any
   * order): its step fails when it runs. `fileName` is the file it is (or will be) stored as.
   */
  async check(spec: string, options: { fileName?: string; defaultName?: string }): Promise<{ result: ParseResult; errors: string[] }> {
    const result = await this.parser.parse(spec, { ...options, baseDir: this.dags.dir });
    // A definition that cannot be read has no calls to follow.
    const cycles = result.dag ? await this.callCycles(options.fileName, result) : [];
    // Valid means it will run: what this build cannot carry out is a problem here, not at the start.
    const unsupported = result.dag ? runProblems(result.dag) : [];
    return { result, errors: [...result.errors, ...cycles, ...unsupported] };
  }

  /**
   * The call cycles reachable from a definition, through the stored DAG files (call-graph.ts).
   * The files it reaches are parsed first, each at most once, so that the search itself is
   * synchronous and no large file is parsed on this thread.
   */
  async callCycles(fileName: string | undefined, parsed: ParsedFile): Promise<string[]> {
    const files = new Map<string, ParsedFile | undefined>();
    let next = new Set(storedTargets(parsed).filter((name) => name !== fileName));
    while (next.size > 0) {
      for (const name of next) files.set(name, undefined);
      const present = await this.existingDags([...next]);
      const loaded = await Promise.all([...next].filter((name) => present.has(name)).map(async (name) => {
        const file = this.dags.readSync(name);
        return [name, file ? await this.parseStored(file) : undefined] as const;
      }));
      next = new Set();
      for (const [name, file] of loaded) {
        files.set(name, file);
        if (file) for (const target of storedTargets(file)) if (target !== fileName && !files.has(target)) next.add(target);
      }
    }
    return callCycles({ fileName, parsed }, (name) => files.get(name));
  }

  /** Which of `names` are DAG files; thousands of them are looked for a batch per turn of the event loop. */
  private async existingDags(names: string[]): Promise<Set<string>> {
    const existing = new Set<string>();
    for (let start = 0; start < names.length; start += LOOKUPS_PER_TURN) {
      if (start > 0) await nextTurn();
      for (const name of names.slice(start, start + LOOKUPS_PER_TURN)) if (this.dags.existsSync(name)) existing.add(name);
    }
    return existing;
  }
}

/** The names a file's DAGs call that are not its own local DAGs: DAG files, if they exist. */
function storedTargets(file: ParsedFile): string[] {
  const locals = new Set(file.localDags.map((local) => local.name));
  const targets = [file.dag, ...file.localDags.map((local) => local.dag)].flatMap(callTargets);
  return [...new Set(targets)].filter((name) => !locals.has(name));
}
