// The Redis channels of distributed dispatch beside the job queues and the record stream: workers
// announce each heartbeat (the server reads the list again), and the server tells a worker to stop
// a run on the worker's own channel.

/** A worker publishes its id here after each heartbeat. */
export const HEARTBEAT_CHANNEL = 'troupe:workers:beat';

/** Where the server tells one worker what to do with a run it holds. */
export const CONTROL_CHANNEL = (workerId: string): string => `troupe:worker:${workerId}:control`;

/** Stop the run of this attempt (its steps get their stop signal). */
export interface StopMessage {
  kind: 'stop';
  attempt: string;
  at: number;
}
