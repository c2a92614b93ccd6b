// A step's log followed with no server: read from its file through the home's log store, as it
// grows; its end heard from the engine's events. A run that this process does not run (queued,
// or left running by a server that stopped) will not write more: what is there is read, and that
// is its end.
import { AppError, isFinalRunStatus, stepNodeOf, nodeStatusLabel, type EngineEvent, type LogFollow, type NodeStatus } from '../../core/index.ts';
import type { EngineHandle } from '../../open-engine.ts';
import type { FollowLogOptions, StepLogEnd } from './types.ts';


/** A step's node, a lifecycle handler's by its node name too. */
export const nodeOf = stepNodeOf;

export function followStepFile(handle: EngineHandle, listen: (listener: (event: EngineEvent) => void) => () => void,
  target: { name: string; dagRunId: string; stepName: string; stream: 'stdout' | 'stderr' }, onLine: (line: string) => void,
  options: FollowLogOptions = {}): Promise<StepLogEnd> {
  const { engine, logs, runs } = handle;
  const record = engine.findRun(target.name, target.dagRunId);
  const node = nodeOf(record, target.stepName);
  if (!node) throw new AppError('not_found', `step ${target.stepName} not found in DAG ${record.name}`);
  const path = target.stream === 'stdout' ? node.stdout : node.stderr;
  const from = options.from ?? 0;
  const { signal } = options;
  signal?.throwIfAborted();
  return new Promise<StepLogEnd>((resolve, reject) => {
    let follow: LogFollow | undefined;
    let finishing = false;
    const current = () => runs.get(record.name, record.dagRunId);
    const stop = () => {
      unlisten();
      signal?.removeEventListener('abort', aborted);
    };
    const done = (nextOffset: number) => {
      stop();
      const status = ((): number => {
        const now = current();
        return (now && nodeOf(now, target.stepName)?.status) ?? 0;
      })();
      resolve({ status, statusLabel: nodeStatusLabel(status as NodeStatus), nextOffset });
    };
    const check = () => {
      if (finishing) return;
      const now = current();
      const status = now && nodeOf(now, target.stepName)?.status;
      if (now && status !== undefined && status <= 1 && !isFinalRunStatus(now.status) && engine.isActive(now.name, now.dagRunId)) return;
      finishing = true;
      if (follow) follow.finish();
      else done(from);
    };
    const aborted = () => {
      stop();
      follow?.close();
      reject(signal?.reason);
    };
    const unlisten = listen((event) => {
      if ('dagRunId' in event && event.dagRunId === record.dagRunId && event.name === record.name) check();
    });
    signal?.addEventListener('abort', aborted, { once: true });
    if (path !== '') {
      follow = logs.follow(path, {
        from,
        lines: (lines) => {
          for (const line of lines) onLine(line.text);
          return true;
        },
        ended: done,
        ...(options.onPartial ? { open: options.onPartial } : {}),
        failed: (error) => {
          stop();
          reject(error);
        },
      });
    }
    check();
  });
}
