// Observation for embedders: every run and step status change, derived from the run records the engine writes.
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
    /** The node's error text ('' when none): what the command's progress shows for a failed step. */
    error: string;
  };

export type EngineListener = (event: EngineEvent) => void;

/**
 * Turns run records, as the engine writes them, into status events; remembers the last statuses
 * seen per run. It reads the writes themselves (the run actor's `persist` action hands each record
 * here with the nodes it changed), not XState inspection: inspecting the actor system cost every
 * run about 10% more CPU while anyone listened. With no listener, a write costs one check.
 */
export class StatusEvents {
  private readonly listeners = new Set<EngineListener>();
  private readonly seen = new Map<string, { run: number; nodes: number[] }>();

  subscribe(listener: EngineListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.seen.clear();
    };
  }

  /**
   * A run's record as a run actor wrote it; `changed`: the nodes this write changed. Only those are
   * compared, not every node of a run of thousands of steps on each of its writes.
   */
  observe(record: RunRecord, changed: Iterable<number>): void {
    if (this.listeners.size === 0) return;
    const key = `${record.name}\n${record.dagRunId}`;
    const last = this.seen.get(key);
    // The time is stamped only when something is told: most writes change no status.
    let stamp: string | undefined;
    const at = () => (stamp ??= new Date().toISOString());
    const runChanged = !last || last.run !== record.status;
    const final = isFinalRunStatus(record.status);
    // A run's start comes before its steps' events, its end after them.
    if (runChanged && !final) this.emitRun(record, at());
    // The first write seen of a run: every node; later ones: the nodes named, in order.
    const statuses = last?.nodes ?? record.nodes.map(() => 0);
    const indexes = last ? [...changed].sort((a, b) => a - b) : record.nodes.keys();
    for (const index of indexes) {
      const node = record.nodes[index];
      if (!node || statuses[index] === node.status) continue;
      statuses[index] = node.status;
      this.emit({ type: `step.${nodeStatusLabel(node.status)}`, name: record.name, dagRunId: record.dagRunId, stepName: node.step.name, status: node.status, at: at(), startedAt: node.startedAt, finishedAt: node.finishedAt, error: node.error });
    }
    if (runChanged && final) this.emitRun(record, at());
    if (final) this.seen.delete(key);
    else this.seen.set(key, { run: record.status, nodes: statuses });
  }

  /** A run's status changed outside a run actor: it was admitted, queued, dequeued, or could not start from its queue. */
  announce(record: RunRecord): void {
    this.observe(record, []);
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
