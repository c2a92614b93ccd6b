// Workers on other machines, reached through Redis: their labels and a DAG's workerSelector, the
// Redis URL (masked wherever it is shown), and the registry of their heartbeats.
export { parseLabels, selectorMatches } from './labels.ts';
export { checkRedisUrl, maskedRedisUrl } from './redis-url.ts';
export { healthOf, heartbeat, leave, listWorkers, WORKER_KEPT_MS, type HealthStatus, type RunningTask, type WorkerState, type WorkerView } from './registry.ts';
export { pickWorker, type Pick } from './picker.ts';
export { RunJobs, RunJobTaker, workerIdProblem, type TakerOptions } from './run-jobs.ts';
export { RECORD_STREAM, RecordInbox, RecordOutbox, type InboxOptions, type StreamItem } from './record-stream.ts';
