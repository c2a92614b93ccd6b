// The scheduler actor as the rest of the code meets it: a question and its answer per message
// (admission, a run's beginning, a dequeue), and a read-only view of what it holds. Nothing else
// sends it events or reads its context.
import { createActor, type Actor } from 'xstate';
import type { RunFinishedEvent, RunInput } from '../actors/index.ts';
import type { Timers } from '../core/index.ts';
import type { Admission, AdmissionAsk } from './admission.ts';
import type { QueuedRun } from './queue-order.ts';
import { schedulerMachine, type Beginning, type SchedulerInput } from './scheduler.machine.ts';
import { SchedulerView } from './view.ts';
import type { Slot } from './slots.ts';

/** What the scheduler does beside deciding: provided by the engine that composes it. */
export interface SchedulerEffects {
  /** A run begins: hand it to where it executes (`worker`: the worker it was placed on; absent: here). */
  dispatchRun(input: RunInput, worker?: string): void;
  stopRun(name: string, dagRunId: string, at: number): void;
  /** A run reached its final state. */
  announceFinished(name: string, dagRunId: string, log: string): void;
  /** A queued run was dispatched, holding `slot`: start it (outside the scheduler's step). */
  startQueued(run: QueuedRun, slot: Slot): void;
}

export class Scheduler {
  private readonly actor: Actor<typeof schedulerMachine>;
  readonly view: SchedulerView;

  constructor(input: SchedulerInput, effects: SchedulerEffects, timers?: Timers) {
    const machine = schedulerMachine.provide({
      actions: {
        dispatchRun: (_, { input: run, worker }) => effects.dispatchRun(run, worker),
        stopRun: (_, { name, dagRunId, at }) => effects.stopRun(name, dagRunId, at),
        announceFinished: (_, { name, dagRunId, log }) => effects.announceFinished(name, dagRunId, log),
        // Started outside the scheduler's step: the start asks the scheduler questions of its own.
        startQueued: (_, { run, slot }) => queueMicrotask(() => effects.startQueued(run, slot)),
      },
    });
    this.actor = createActor(machine, { input, ...(timers ? { clock: timers } : {}) });
    this.view = new SchedulerView(() => this.actor.getSnapshot().context);
  }

  start(): void {
    this.actor.start();
  }

  stop(): void {
    this.actor.stop();
  }

  /** Admitted (with its slot), queued (with what it waits for) or refused, decided in this call. */
  ask(ask: AdmissionAsk): Admission {
    return this.answer<Admission>((reply) => this.actor.send({ type: 'admission.ask', ask, reply }));
  }

  /**
   * The run begins on its slot, or is refused (the server shuts down, or its start was given up).
   * `beginning` runs as it begins, before the run is dispatched.
   */
  begin(slot: Slot, input: RunInput, beginning: () => void): Beginning {
    return this.answer((reply) => this.actor.send({ type: 'run.begin', slot, input, beginning, reply }));
  }

  /** A run a previous process placed on a worker that still runs it: active here again, nothing dispatched. */
  adopt(name: string, dagRunId: string, worker: string, queue: string): void {
    this.actor.send({ type: 'run.adopt', name, dagRunId, worker, queue });
  }

  /** Hands back a slot whose run will not begin; nothing when it has begun or was handed back. */
  release(slot: Slot): void {
    this.actor.send({ type: 'run.release', slot });
  }

  stopRun(name: string, dagRunId: string, at: number): void {
    this.actor.send({ type: 'run.stop', name, dagRunId, at });
  }

  /** The run dispatcher's report of a run's end. */
  finished(end: RunFinishedEvent): void {
    this.actor.send(end);
  }

  restoreQueued(run: QueuedRun): void {
    this.actor.send({ type: 'queue.restore', run });
  }

  /**
   * Takes a queued run out of its queue: the run, or undefined when it is not queued. Answered once
   * the scheduler's step that is under way, if any, has ended: a subscriber may dequeue as it hears
   * a run begin, which it is told inside that step.
   */
  dequeue(name: string, dagRunId: string): Promise<QueuedRun | undefined> {
    return new Promise((resolve) => this.actor.send({ type: 'queue.remove', name, dagRunId, reply: resolve }));
  }

  setQueueLimits(limits: ReadonlyMap<string, number>): void {
    this.actor.send({ type: 'queue.limits', limits });
  }

  /** Something it cannot see changed (a DAG was resumed): its queued runs may go. */
  poke(): void {
    this.actor.send({ type: 'queue.poke' });
  }

  /** Only sub DAG runs of active runs begin from now on; queued runs stay queued. */
  drain(): void {
    this.actor.send({ type: 'admission.drain' });
  }

  /** No run begins from now on. */
  close(): void {
    this.actor.send({ type: 'admission.close' });
  }

  /**
   * Sends a question and returns its answer, given in the same step. Asked from inside the
   * scheduler's own step, the event would wait for that step to end: starts and sub DAG runs ask
   * after an await (a parse, a dispatched run's microtask), never from inside it.
   */
  private answer<T>(send: (reply: (answer: T) => void) => void): T {
    let answered = false;
    let answer: T | undefined;
    send((value) => {
      answered = true;
      answer = value;
    });
    if (!answered) throw new Error('the scheduler was asked from inside its own step');
    return answer as T;
  }
}
