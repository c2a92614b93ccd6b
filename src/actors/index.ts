export { Engine, type EngineDeps, type StartOptions, type InlineOptions } from './engine.ts';
export type { EngineEvent, EngineListener } from './engine-events.ts';
