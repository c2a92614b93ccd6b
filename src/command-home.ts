// What the troupe command needs of a home besides its engine: definitions checked as the server
// checks them (validate, dry), and a DAG's expired history found and removed (cleanup).
import { expiredRunTrees, Definitions } from './actors/index.ts';
import type { RunRecord } from './core/index.ts';
import type { ParseResult } from './definition/index.ts';
import { DagFiles, RunHistory } from './store/index.ts';
import type { EngineHandle } from './main.ts';

/** Runs read from the index a page at a time while expired ones are looked for. */
const PAGE = 64;

/** A definition checked as `POST /dags/validate` checks it; `dir`: where the DAGs it calls are. */
export function checkDefinition(dir: string, spec: string, options: { fileName: string }): Promise<{ result: ParseResult; errors: string[] }> {
  return new Definitions(new DagFiles(dir)).check(spec, { fileName: options.fileName, defaultName: options.fileName });
}

/**
 * The finished root runs of `name` whose last activity is before `cutoffMs`, each with its sub DAG
 * runs, in removal order; a tree with a run still active anywhere in it is left out.
 */
export function expiredHistory(runs: EngineHandle['runs'], name: string, cutoffMs: number): RunRecord[][] {
  const history = new RunHistory(runs);
  const trees: RunRecord[][] = [];
  let after: { createdAtMs: number; dagRunId: string } | undefined;
  for (;;) {
    const page = history.runsCreatedBefore(name, cutoffMs, PAGE, after);
    if (page.length === 0) return trees;
    after = page[page.length - 1];
    const candidates = page.map(({ dagRunId }) => history.get(name, dagRunId)).filter((record) => record !== undefined);
    trees.push(...expiredRunTrees(candidates, cutoffMs, (runName, id) => history.get(runName, id)));
  }
}

/** Removes the runs of `trees` (as expiredHistory gives them) with their log files; answers how many. */
export function removeHistory(runs: EngineHandle['runs'], trees: RunRecord[][]): Promise<number> {
  return new RunHistory(runs).remover().removeRuns(trees.flat());
}
