// Workers on other machines, reached through Redis: the registry of their heartbeats, the runs
// handed to them (BullMQ) and the stream of what their runs produce. Labels, placement and the
// Redis URL's checks are plain functions of core/.
export { heartbeat, leave, listWorkers, workerView, WORKER_KEPT_MS, type ListedWorker, type WorkerState } from './registry.ts';
export { RunJobs, RunJobTaker, type TakerOptions } from './run-jobs.ts';
export { RECORD_STREAM, RecordInbox, RecordOutbox, appliedFrom, type InboxOptions, type StreamItem } from './record-stream.ts';
