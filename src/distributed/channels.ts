// The Redis keys and channels of distributed dispatch beside the job queues and the record stream:
// workers announce each heartbeat (the server reads the list again), the server tells a worker to
// stop a run on the worker's own channel, and keeps the set of attempts it has handed out.

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

/**
 * The attempts the server has handed out and not seen end: a worker runs a job only while its
 * attempt is here (a job BullMQ gives again after its worker died, or one of a run settled as
 * lost, is not run twice).
 */
export const HANDED_SET = 'troupe:handed';

/** Each attempt's newest applied stream number, written as the server acknowledges what it applied. */
export const APPLIED_HASH = 'troupe:applied';
