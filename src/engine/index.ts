export { Engine, type EngineParts, type RunDispatcherFactory } from './engine.ts';
export type { EngineDeps, StartOptions, InlineOptions } from '../scheduler/index.ts';
export type { EngineEvent, EngineListener } from './engine-events.ts';
export { cronEngineOf } from './cron-port.ts';
export { findRun, runIdOf } from './run-lookup.ts';
export type { FollowOptions } from './event-feed.ts';
