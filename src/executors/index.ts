export { PiscinaDispatcher, type PoolOptions } from './pool.ts';
export { spawnMethod } from './shell/spawner.ts';
export type { SpawnMode } from './protocol.ts';
export { TaskPool, type TaskPoolOptions } from './task-pool.ts';
