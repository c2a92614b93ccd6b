export { Engine, type EngineDeps, type StartOptions, type InlineOptions } from './engine.ts';
export type { EngineEvent, EngineListener } from './engine-events.ts';
export { Definitions } from './definitions.ts';
export { RetentionSweeper } from './scheduler/retention.ts';
export { CronScheduler } from './scheduler/cron/cron-scheduler.ts';
export { cronEngineOf } from './scheduler/cron/cron-engine.ts';
export { DagsWatcher } from './scheduler/cron/dags-watcher.ts';
export type { EnqueueOptions, QueueListing } from './queueing.ts';
export type { CatalogEntry, DagListing } from './dag-catalog.ts';
