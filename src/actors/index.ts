export { Engine, type EngineDeps, type StartOptions, type InlineOptions } from './engine.ts';
export type { EngineEvent, EngineListener } from './engine-events.ts';
export { Definitions } from './definitions.ts';
export { RetentionSweeper } from './scheduler/retention.ts';
export { nextStart } from './scheduler/cron/ticks.ts';
export type { EnqueueOptions, QueueListing } from './queueing.ts';
