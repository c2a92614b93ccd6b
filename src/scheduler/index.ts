export { RetentionSweeper, expiredRunTrees, type CleanupRequest, type CleanupResult } from './retention.ts';
export { CronScheduler } from './cron/cron-scheduler.ts';
export type { CronEngine } from './cron/cron-scheduler.ts';
export type { EnqueueOptions, QueueListing } from './queueing.ts';
export { ChildRuns } from './child-runs.ts';
export { RunStarter } from './run-starter.ts';
export { Queueing, selectorOf } from './queueing.ts';
export { settleInterrupted, settleRuns } from './recovery.ts';


export type { EngineDeps, StartOptions, InlineOptions } from './start-options.ts';
export { Scheduler, type SchedulerEffects } from './scheduler.ts';
export { SchedulerView } from './view.ts';
export { retryRun, rescheduleRun, type RunAgainHost } from './run-again.ts';
export type { Admission, AdmissionAsk } from './admission.ts';
