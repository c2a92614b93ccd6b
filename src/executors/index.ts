export { PiscinaDispatcher, type PoolOptions } from './pool.ts';
export { InlineDispatcher } from './inline.ts';
export { spawnMethod } from './shell/spawner.ts';
export type { SpawnMode } from './protocol.ts';
export { TaskPool } from './task-pool.ts';
export { JqRunner } from './jq/jq-runner.ts';
export { endOrphanSteps } from './orphans.ts';
export { isSameProcess, processStat } from './step-registry.ts';
