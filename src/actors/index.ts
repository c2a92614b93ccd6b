export { Engine, type EngineDeps, type StartOptions, type InlineOptions } from './engine.ts';
export type { EngineEvent, EngineListener } from './engine-events.ts';
export { CronPlanner, type CronPlannerOptions, type DueTick } from './scheduler/cron/cron-planner.ts';
export { CronTicker, type CronTickerOptions, type CronTimers } from './scheduler/cron/cron-ticker.ts';
export { compileSchedule, nextStart, nextTick, nextTicks, ticksBetween, type Tick, type TickKind } from './scheduler/cron/ticks.ts';
