// Recovery at start: runs that a process recorded active and never finished (it crashed, or was
// killed) are settled before the API opens, so every run is accounted for.
import { NodeStatus, RunStatus, isoTime, type LogStore, type RunStore } from '../../core/index.ts';
import { logLine } from '../run/log-line.ts';

const INTERRUPTED = 'the server stopped while the run was active';

/** Records as failed every unfinished run that is not active here, its running steps too. */
export async function settleInterrupted(runs: RunStore, logs: LogStore, now: number, isActive: (name: string, dagRunId: string) => boolean): Promise<void> {
  const writes: Promise<void>[] = [];
  for (const status of [RunStatus.Running, RunStatus.Queued]) {
    for (const record of runs.list({ status, includeSubRuns: true })) {
      if (isActive(record.name, record.dagRunId)) continue;
      writes.push(runs.save({
        ...record,
        status: RunStatus.Failed,
        finishedAt: isoTime(now),
        error: INTERRUPTED,
        nodes: record.nodes.map((node) => node.status === NodeStatus.Running
          ? { ...node, status: NodeStatus.Failed, finishedAt: isoTime(now), error: INTERRUPTED }
          : node),
      }));
      logs.appendRunLog(record.log, logLine(now, 'ERROR', 'DAG run interrupted', { dag: record.name, 'run-id': record.dagRunId }));
      void logs.closeRunLog(record.log);
    }
  }
  await Promise.all(writes);
}
