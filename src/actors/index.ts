export { Engine, type EngineDeps, type StartOptions, type InlineOptions } from './engine.ts';
export type { EngineEvent, EngineListener } from './engine-events.ts';
export { Definitions } from './definitions.ts';
export { RetentionSweeper, RETENTION_SWEEP_EVERY_MS } from './scheduler/retention.ts';
export { CronPlanner, type CronPlannerOptions, type DueTick } from './scheduler/cron/cron-planner.ts';
export { CronTicker, type CronTickerOptions, type CronTimers } from './scheduler/cron/cron-ticker.ts';
export { compileSchedule, nextStart, nextTick, nextTicks, ticksBetween, type Tick, type TickKind } from './scheduler/cron/ticks.ts';
