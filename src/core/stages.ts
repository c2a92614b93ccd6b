// Marks the stages a run passes through, for the breakdown of where its time goes
// (bench/breakdown.ts, docs/performance.md). Each mark is published on a diagnostics channel of the
// thread that passes the stage; with nothing subscribed, as in every server but the bench's, a
// mark costs one property read.
import { channel } from 'node:diagnostics_channel';

/** The stages, in the order a one-step run passes them; `at` is wall time in ms, comparable between threads. */
export type Stage =
  | 'request.received'
  | 'run.admitted'
  | 'record.first.durable'
  | 'request.answered'
  | 'step.dispatched'
  | 'step.received'
  | 'process.spawned'
  | 'process.exited'
  | 'step.returned'
  | 'step.result'
  | 'record.final.issued'
  | 'record.final.durable';

export interface StageMark {
  stage: Stage;
  at: number;
  /** What the stage concerns, where it helps to tell marks apart (a request's route). */
  detail?: string;
}

export const STAGE_CHANNEL = 'troupe:stage';
const stages = channel(STAGE_CHANNEL);

/** Whether anything listens to the marks: a caller that must build a mark's detail asks first. */
export function stagesWatched(): boolean {
  return stages.hasSubscribers;
}

export function markStage(stage: Stage, detail?: string): void {
  if (!stages.hasSubscribers) return;
  const mark: StageMark = { stage, at: performance.timeOrigin + performance.now() };
  if (detail !== undefined) mark.detail = detail;
  stages.publish(mark);
}
