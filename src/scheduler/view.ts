// The scheduler's context as others may read it: which runs are active, each queue's limit and
// waiting runs, and what each waits for (GET /queues, metrics, the command). Read-only: a change
// is a question to the scheduler (scheduler.ts).
import type { QueuedRun, WaitReason } from './queue-order.ts';
import { admittedCount, findQueued, isActive, waitReasons, type Admitting, type Slots } from './slots.ts';

export class SchedulerView {
  constructor(private readonly read: () => Readonly<Slots>) {}

  isActive(name: string, dagRunId: string): boolean {
    return isActive(this.read(), name, dagRunId);
  }

  /** Ids of a DAG name's active runs. */
  activeIds(name: string): readonly string[] {
    return this.read().active.get(name) ?? [];
  }

  activeRuns(): Array<{ name: string; dagRunId: string }> {
    return [...this.read().active].flatMap(([name, ids]) => ids.map((dagRunId) => ({ name, dagRunId })));
  }

  /** Runs of a DAG name active or admitted and starting (what maxActiveRuns counts). */
  admitted(name: string): number {
    return admittedCount(this.read(), name);
  }

  /** open, draining (only sub DAG runs of active runs begin) or closed. */
  admitting(): Admitting {
    return this.read().admitting;
  }

  isQueued(name: string, dagRunId: string): boolean {
    return findQueued(this.read(), name, dagRunId) !== undefined;
  }

  /** A custom queue's maxConcurrency, by queue name; every other queue is a DAG's. */
  queueLimits(): ReadonlyMap<string, number> {
    return this.read().queueLimits;
  }

  /** Each queue's waiting runs, first in first. */
  queued(): ReadonlyMap<string, readonly QueuedRun[]> {
    return this.read().queued;
  }

  /** Run key -> the queue it counts against, for runs active or starting that have one. */
  queueOfRuns(): ReadonlyMap<string, string> {
    return this.read().queueOf;
  }

  /** What each queued run waits for, by run key. */
  waitReasons(): Map<string, WaitReason> {
    return waitReasons(this.read() as Slots);
  }
}
