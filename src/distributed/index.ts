// Distributed dispatch: runs with a workerSelector placed on `troupe worker` processes through
// Redis. The server's side (remote-runs.ts) hands runs out and applies what comes back; the
// worker's side (worker-runs.ts) takes them and runs them with its own engine.
export { RemoteRuns, type RemoteRunsOptions } from './remote-runs.ts';
export { WorkerRuns, type WorkerRunsOptions, type WorkerEngine } from './worker-runs.ts';
export type { Roots } from './payload.ts';
