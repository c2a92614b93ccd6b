// Observation for embedders: every run and step status change, derived from XState inspection.
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { isFinalRunStatus, nodeStatusLabel, runStatusLabel, type NodeStatusLabel, type RunRecord, type RunStatusLabel } from '../core/index.ts';

/**
 * The record's times ride along (references to strings it holds, nothing is built): a subscriber
 * measuring durations (the metrics) needs no map of its own per step, nor a read of the store.
 */
export type EngineEvent =
  | {
    type: `run.${RunStatusLabel}`; name: string; dagRunId: string; status: number; at: string;
    /** '' for a root run (the runs `GET /dag-runs` lists). */
    parentDAGRunId: string; queuedAt: string; startedAt: string; finishedAt: string;
  }
  | {
    type: `step.${NodeStatusLabel}`; name: string; dagRunId: string; stepName: string; status: number; at: string;
    startedAt: string; finishedAt: string;
  };

export type EngineListener = (event: EngineEvent) => void;

/** Where inspection comes from: the actor system's `inspect`. */
export interface InspectableSystem {
  inspect(observer: (event: InspectionEvent) => void): { unsubscribe(): void };
}

/**
 * Turns run actor snapshots into status events; remembers the last statuses seen per run. It
 * inspects the actor system only while someone listens: XState builds no inspection events when
 * nobody observes, which saves a few percent of every step's cost.
 */
export class StatusEvents {
  private readonly listeners = new Set<EngineListener>();
  private readonly seen = new Map<string, { run: number; nodes: number[] }>();
  /**
   * Per run, the nodes its writes (the `persist` action) named since its last snapshot: only those
   * are compared, not every node of a run of thousands of steps on each of its events.
   */
  private readonly changed = new Map<string, Set<number>>();
  private system: InspectableSystem | undefined;
  private inspection: { unsubscribe(): void } | undefined;

  /** Called once the actor system exists. */
  attach(system: InspectableSystem): void {
    this.system = system;
    if (this.listeners.size > 0) this.inspection ??= system.inspect(this.inspect);
  }

  subscribe(listener: EngineListener): () => void {
    this.listeners.add(listener);
    if (this.system) this.inspection ??= this.system.inspect(this.inspect);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      this.inspection?.unsubscribe();
      this.inspection = undefined;
      this.seen.clear();
      this.changed.clear();
    };
  }

  private readonly inspect = (event: InspectionEvent): void => {
    if (event.type !== '@xstate.snapshot' && event.type !== '@xstate.action') return;
    const key = (event.actorRef as AnyActorRef).id;
    if (!key.startsWith('run:')) return;
    if (event.type === '@xstate.action') {
      const { type, params } = event.action as { type: string; params?: { changed?: readonly number[] } };
      if (type !== 'persist' || !params?.changed) return;
      let indexes = this.changed.get(key);
      if (!indexes) this.changed.set(key, (indexes = new Set()));
      for (const index of params.changed) indexes.add(index);
      return;
    }
    const context = (event.snapshot as { context?: { record?: RunRecord } }).context;
    const record = context?.record;
    if (!record) return;
    const last = this.seen.get(key);
    const named = this.changed.get(key);
    this.changed.delete(key);
    const at = new Date().toISOString();
    const runChanged = !last || last.run !== record.status;
    const final = isFinalRunStatus(record.status);
    // A run's start comes before its steps' events, its end after them.
    if (runChanged && !final) this.emitRun(record, at);
    // The first snapshot seen of a run: every node; later ones: the nodes named since, in order.
    const statuses = last?.nodes ?? record.nodes.map(() => 0);
    const indexes = last ? [...(named ?? [])].sort((a, b) => a - b) : record.nodes.keys();
    for (const index of indexes) {
      const node = record.nodes[index];
      if (statuses[index] === node.status) continue;
      statuses[index] = node.status;
      this.emit({ type: `step.${nodeStatusLabel(node.status)}`, name: record.name, dagRunId: record.dagRunId, stepName: node.step.name, status: node.status, at, startedAt: node.startedAt, finishedAt: node.finishedAt });
    }
    if (runChanged && final) this.emitRun(record, at);
    if ((event.snapshot as { status?: string }).status === 'done') this.seen.delete(key);
    else this.seen.set(key, { run: record.status, nodes: statuses });
  };

  /** A run's status changed outside a run actor: it was queued, dequeued, or could not start from its queue. */
  announce(record: RunRecord): void {
    if (this.listeners.size > 0) this.emitRun(record, new Date().toISOString());
  }

  private emitRun(record: RunRecord, at: string): void {
    this.emit({
      type: `run.${runStatusLabel(record.status)}`, name: record.name, dagRunId: record.dagRunId, status: record.status, at,
      parentDAGRunId: record.parentDAGRunId, queuedAt: record.queuedAt, startedAt: record.startedAt, finishedAt: record.finishedAt,
    });
  }

  private emit(event: EngineEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the engine goes on.
      }
    }
  }
}
