export { LmdbRunStore } from './lmdb-run-store.ts';
export { DagFiles } from './dag-files.ts';
export { LogFiles } from './log-files.ts';
export { RunHistory } from './run-history.ts';
export { LmdbQueueStore } from './lmdb-queue-store.ts';
export { CronStateFile } from './cron-state-file.ts';
export { LmdbUserStore } from './lmdb-user-store.ts';
export { isStorageFull, storageError } from './storage-full.ts';
export { LmdbIdempotencyStore } from './lmdb-idempotency-store.ts';
