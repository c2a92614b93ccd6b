// Removal of whole runs for the retention sweep: a run's log files, then its rows in the store.
import { readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileSafe, type NodeRecord, type RunRecord, type RunSummaryRow } from '../core/index.ts';
import type { LmdbRunStore } from './lmdb-run-store.ts';
import { ATTEMPT_FILE_TAIL, scriptPathOf } from './log-files.ts';
import { log } from '../logging/index.ts';

/**
 * One unlink (rm's lstat first doubled the cost); a file already gone is what was wanted. A file
 * that cannot be removed is reported and left: the run goes all the same, so that one such file
 * does not stop the history of its DAG from ever being swept again.
 */
async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') log.error({ path, error: (error as Error).message }, 'history retention cannot remove a file');
  }
}

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

  newestRun(name: string): RunSummaryRow | undefined {
    return this.runs.newestRun(name);
  }

  /** A removal for one sweep: each log folder is listed once, when the sweep first needs it. */
  remover(): RunRemover {
    return new RunRemover(this.runs);
  }
}

/**
 * A log folder as listed once per sweep: its files by the run id they begin with
 * (`<dagRunId>.<attemptId>.<rest>`), every name, and when it was listed.
 */
interface FolderIndex {
  byId: Map<string, string[]>;
  names: Set<string>;
  listedAtMs: number;
}

/**
 * A run that ended this long before its folder was listed has all its files in the listing: its
 * run log is written as it ends, in the same second.
 */
const SETTLED_BEFORE_LISTING_MS = 60_000;

export class RunRemover {
  private readonly folders = new Map<string, Promise<FolderIndex>>();

  constructor(private readonly runs: LmdbRunStore) {}

  /**
   * Removes the runs' files, then their rows, the rows in the order given (a sub DAG run before its
   * parent, so that an interrupted removal leaves the rest reachable from the root for the next
   * sweep). Files go first: a crash between the two leaves rows a later sweep finds, never files
   * nobody can find. Answers how many runs were removed; a run that is not finished is kept whole.
   */
  async removeRuns(records: RunRecord[]): Promise<number> {
    // Checked before the files go as well as before the rows: an active run keeps both.
    const finished = records.map((record) => this.runs.finishedRun(record.name, record.dagRunId)).filter((record) => record !== undefined);
    const files = (await Promise.all(finished.map((record) => this.filesOf(record)))).flat();
    await Promise.all(files.map(removeFile));
    // Issued in one turn: the rows of the whole batch go in one transaction.
    const removed = await Promise.all(finished.map((record) => this.runs.removeRun(record.name, record.dagRunId)));
    return removed.filter(Boolean).length;
  }

  /**
   * The run's files in its log folder: those its record names, and those of its earlier attempts,
   * found by name. When the id was cut to fit a file name, the search could match another run's
   * files and is skipped; when another run's id extends this one (`r1` and `r1.b2c3d4`), a file
   * that could be either's is left to the run whose id is longest.
   */
  private async filesOf(record: RunRecord): Promise<string[]> {
    if (record.log === '') return [];
    const dir = dirname(record.log);
    const nodes: NodeRecord[] = [...record.nodes, ...Object.values(record.handlers ?? {})];
    const named = [record.log, ...nodes.flatMap((node) => [node.stdout, node.stderr, scriptPathOf(node.stdout)])];
    const folder = await this.folder(dir);
    // A record names files a run may never have written (stderr left empty, a step without a
    // script): those the listing lacks are not unlinked, when the listing came after the run
    // ended. A failed unlink costs the main thread more than a good one (the error it builds), and
    // most of a sweep's main-thread time went to them (10 of a run's 16 names on a 5-step run).
    const listed = Date.parse(record.finishedAt) < folder.listedAtMs - SETTLED_BEFORE_LISTING_MS;
    // Only files of the run's own folder: a record never names another, and this is a second fence.
    const files = new Set(named.filter((path) => path !== '' && dirname(path) === dir && (!listed || folder.names.has(basename(path)))));
    const { name, dagRunId } = record;
    if (fileSafe(dagRunId) !== dagRunId || basename(dir) !== fileSafe(name)) return [...files];
    const extended = this.runs.hasRunIdStartingWith(name, `${dagRunId}.`);
    for (const file of folder.byId.get(dagRunId) ?? []) {
      if (extended && this.ownedByLongerId(name, dagRunId, file)) continue;
      files.add(join(dir, file));
    }
    return [...files];
  }

  private ownedByLongerId(name: string, dagRunId: string, file: string): boolean {
    for (let dot = file.indexOf('.', dagRunId.length + 1); dot !== -1; dot = file.indexOf('.', dot + 1)) {
      if (ATTEMPT_FILE_TAIL.test(file.slice(dot + 1)) && this.runs.get(name, file.slice(0, dot))) return true;
    }
    return false;
  }

  /** The folder's files under every id they could belong to, and their names; a folder that cannot be read lists none (and is trusted for none). */
  private folder(dir: string): Promise<FolderIndex> {
    let index = this.folders.get(dir);
    if (!index) {
      const listedAtMs = Date.now();
      // A folder that cannot be listed tells nothing of which files exist: every named one is tried.
      index = readdir(dir).then((names) => indexFolder(names, listedAtMs), () => ({ byId: new Map(), names: new Set<string>(), listedAtMs: Number.NEGATIVE_INFINITY }));
      this.folders.set(dir, index);
    }
    return index;
  }
}

/** File names indexed per turn of the event loop: 30,000 took 20 - 35 ms in one (measured). */
const FILES_PER_TURN = 2048;

async function indexFolder(names: string[], listedAtMs: number): Promise<FolderIndex> {
  const byId = new Map<string, string[]>();
  for (let start = 0; start < names.length; start += FILES_PER_TURN) {
    if (start > 0) await nextTurn();
    for (const file of names.slice(start, start + FILES_PER_TURN)) {
      // `<dagRunId>.<attemptId>.<rest>`: ids contain dots too, so every split that fits is kept.
      for (let dot = file.indexOf('.'); dot !== -1; dot = file.indexOf('.', dot + 1)) {
        if (!ATTEMPT_FILE_TAIL.test(file.slice(dot + 1))) continue;
        const id = file.slice(0, dot);
        const files = byId.get(id);
        if (files) files.push(file);
        else byId.set(id, [file]);
      }
    }
  }
  return { byId, names: new Set(names), listedAtMs };
}
