export { Engine, type EngineDeps, type StartOptions, type InlineOptions } from './engine.ts';
export type { EngineEvent, EngineListener } from './engine-events.ts';
export { Definitions } from './definitions.ts';
export { RetentionSweeper, RETENTION_SWEEP_EVERY_MS } from './scheduler/retention.ts';
