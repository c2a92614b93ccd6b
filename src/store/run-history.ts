// Removal of whole runs for the retention sweep: a run's log files, then its rows in the store.
import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileSafe, type NodeRecord, type RunRecord } from '../core/index.ts';
import type { LmdbRunStore } from './lmdb-run-store.ts';

/** Attempt ids are 6 hex digits (core/ids.ts); step files carry a 3-digit index (000: a handler). */
const ATTEMPT_FILE = /^[0-9a-f]{6}\.(?:run\.log|\d{3}\.[A-Za-z0-9_.-]+\.(?:out|err|script))$/;

export class RunHistory {
  constructor(private readonly runs: LmdbRunStore) {}

  runNames(): string[] {
    return this.runs.runNames();
  }

  runsCreatedBefore(name: string, beforeMs: number, limit: number, after?: { createdAtMs: number; dagRunId: string }) {
    return this.runs.runsCreatedBefore(name, beforeMs, limit, after);
  }

  get(name: string, dagRunId: string): RunRecord | undefined {
    return this.runs.get(name, dagRunId);
  }

  latest(name: string): RunRecord | undefined {
    return this.runs.latest(name);
  }

  /**
   * Removes each run's files, then its rows, in the order given (a sub DAG run before its parent,
   * so that an interrupted removal leaves the rest reachable from the root for the next sweep).
   * Files go first: a crash between the two leaves rows a later sweep finds, never files nobody
   * can find. Answers how many runs were removed; a run that was started again is kept.
   */
  async removeRuns(records: RunRecord[]): Promise<number> {
    // One listing per log folder per call: a folder holds the files of thousands of runs.
    const listings = new Map<string, Promise<string[]>>();
    const list = (dir: string) => {
      let listing = listings.get(dir);
      if (!listing) listings.set(dir, (listing = readdir(dir).catch(() => [])));
      return listing;
    };
    let removed = 0;
    for (const record of records) {
      // Checked before the files go as well as before the rows: an active run keeps both.
      const current = this.runs.finishedRun(record.name, record.dagRunId);
      if (!current) continue;
      await Promise.all((await this.filesOf(current, list)).map((path) => rm(path, { force: true })));
      if (await this.runs.removeRun(current.name, current.dagRunId)) removed++;
    }
    return removed;
  }

  /**
   * The run's files in its log folder: those its record names, and those of its earlier attempts,
   * found by name (`<dagRunId>.<attemptId>.`). When the id was cut to fit a file name, the search
   * could match another run's files and is skipped; when another run's id extends this one
   * (`r1` and `r1.b2c3d4`), a file is left to the longest id it begins with.
   */
  private async filesOf(record: RunRecord, list: (dir: string) => Promise<string[]>): Promise<string[]> {
    if (record.log === '') return [];
    const dir = dirname(record.log);
    const nodes: NodeRecord[] = [...record.nodes, ...Object.values(record.handlers ?? {})];
    const named = [record.log, ...nodes.flatMap((node) => [node.stdout, node.stderr, node.stdout.replace(/\.out$/, '.script')])];
    // Only files of the run's own folder: a record never names another, and this is a second fence.
    const files = new Set(named.filter((path) => path !== '' && dirname(path) === dir));
    const { name, dagRunId } = record;
    if (fileSafe(dagRunId) !== dagRunId || basename(dir) !== fileSafe(name)) return [...files];
    const prefix = `${dagRunId}.`;
    const extended = this.runs.hasRunIdStartingWith(name, prefix);
    const ownedByLongerId = (file: string) => {
      for (let dot = file.indexOf('.', prefix.length); dot !== -1; dot = file.indexOf('.', dot + 1)) {
        if (ATTEMPT_FILE.test(file.slice(dot + 1)) && this.runs.get(name, file.slice(0, dot))) return true;
      }
      return false;
    };
    for (const file of await list(dir)) {
      if (!file.startsWith(prefix) || !ATTEMPT_FILE.test(file.slice(prefix.length))) continue;
      if (extended && ownedByLongerId(file)) continue;
      files.add(join(dir, file));
    }
    return [...files];
  }
}
