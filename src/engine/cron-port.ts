// The engine and stores as the cron scheduler sees them (CronEngine).
import type { DagStore, RunStore } from '../core/index.ts';
import type { Definitions } from '../catalog/index.ts';
import type { Engine } from './engine.ts';
import type { CronEngine } from '../scheduler/index.ts';

export function cronEngineOf(engine: Engine, definitions: Definitions, dags: DagStore, runs: RunStore): CronEngine {
  return {
    fileNames: () => dags.fileNames(),
    loadDag: async (fileName) => {
      const loaded = await definitions.loadDag(fileName);
      if (!loaded) return undefined;
      const { dag, errors } = loaded.result;
      // Only what the scheduler reads is kept: a definition may weigh megabytes.
      return dag && errors.length === 0
        ? { dag: { name: dag.name, schedule: dag.schedule, skipIfSuccessful: dag.skipIfSuccessful, restartWaitSec: dag.restartWaitSec } }
        : {};
    },
    enqueue: (fileName) => engine.enqueueDag(fileName, {}),
    stopAll: (name) => engine.stopAll(name),
    latestRun: (name) => runs.latest(name),
    isSuspended: (fileName) => runs.isSuspended(fileName),
  };
}
