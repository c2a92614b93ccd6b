// `troupe worker`: a process that takes DAG runs from a troupe server through Redis and runs them
// with the engine of its own scratch home (src/distributed/worker-runs.ts does the work). The
// scratch home holds what the runs under way need and nothing else: it is emptied at each start.
import { hostname, homedir } from 'node:os';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { workerIdProblem } from './core/index.ts';
import { WorkerRuns } from './distributed/index.ts';
import { openEngine } from './open-engine.ts';
import { filterSystemEnv } from './definition/index.ts';
import { RunHistory } from './store/index.ts';

export interface WorkerOptions {
  /** redis:// or rediss:// URL, credentials included (never shown unmasked). */
  redisUrl: string;
  /** What a DAG's workerSelector is matched against. */
  labels: Record<string, string>;
  /** The most runs at once (its "pollers"); at least 1. */
  maxActiveRuns: number;
  /** Default: the host name and the process id. */
  id?: string;
  /** Its scratch home (runs' files, logs, its own store); default ~/.troupe-worker/<id>. */
  home?: string;
  /** How many finished runs keep their files and records in the scratch home (the newest); older ones go as new ones end. */
  keepRuns: number;
}

export interface RunningWorker {
  id: string;
  /** Takes nothing new; waits up to `graceMs` for the runs under way, then stops them; leaves the registry. */
  drain(graceMs: number): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const id = options.id ?? defaultId();
  const problem = workerIdProblem(id);
  if (problem) throw new Error(problem);
  if (!Number.isInteger(options.maxActiveRuns) || options.maxActiveRuns < 1) throw new Error('--max-active-runs must be a whole number of at least 1');
  if (!Number.isInteger(options.keepRuns) || options.keepRuns < 0) throw new Error('--keep-runs must be a whole number, 0 or more');
  const home = options.home ?? join(homedir(), '.troupe-worker', id);
  const dirs = { dags: join(home, 'dags'), data: join(home, 'data'), logs: join(home, 'logs') };
  // Scratch: runs a previous process of this worker held were settled by the server as it went away.
  await Promise.all(Object.values(dirs).map((dir) => rm(dir, { recursive: true, force: true })));
  const runs = new WorkerRuns({ redisUrl: options.redisUrl, id, labels: options.labels, maxActiveRuns: options.maxActiveRuns, keepRuns: options.keepRuns, roots: { logs: dirs.logs, dags: dirs.dags }, systemEnv: filterSystemEnv(process.env) });
  const handle = await openEngine(
    { home, dagsDir: dirs.dags, dataDir: dirs.data, logDir: dirs.logs, commandOnly: true, writeExample: false },
    { stepPool: true, scratchStore: true, parts: { relayReports: (reports) => runs.relay(reports), dispatching: (run) => runs.dispatching(run), workerLabels: options.labels } },
  );
  try {
    // The server holds every record and file of a finished run: the copies here go, oldest first.
    const history = new RunHistory(handle.runs);
    await runs.start(handle.engine, {
      forget: async (names) => {
        const records = names.map(({ name, dagRunId }) => handle.runs.get(name, dagRunId)).filter((record) => record !== undefined);
        await history.remover().removeRuns(records);
      },
      keep: async (records) => {
        await Promise.all(records.map((record) => handle.runs.save(record)));
      },
    });
  } catch (error) {
    await handle.close();
    throw error;
  }
  return {
    id,
    drain: async (graceMs) => {
      await runs.drain(graceMs);
      await handle.close();
    },
  };
}

/** A worker's id when none is given: its host's name and its process id, in the letters an id may hold. */
function defaultId(): string {
  const host = hostname().replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '') || 'worker';
  return `${host.slice(0, 50)}-${process.pid}`;
}
