// The verbs with no server on the home: this process takes the home's lock and runs a command's
// engine on it (no schedules, no retention sweep, queued runs stay queued for a server), so that
// what it starts is the same run, in the same store, as a server would start.
import { AppError, isFinalRunStatus, isRunEvent, NodeStatus, nodeStatusLabel, runStatusLabel, RunStatus, type RunRecord } from '../../core/index.ts';
import { logToStderr } from '../../logging/index.ts';
import { openEngine, type EngineHandle, type TroupeConfig } from '../../open-engine.ts';
import type { EngineEvent } from '../../index.ts';
import { CliError } from '../errors.ts';
import { followStepFile, nodeOf } from './embedded-log.ts';
import { LOG_PAGE_LINES, type Backend, type CleanupView, type DagRef, type FollowLogOptions, type LogPage, type LogPageQuery, type NodeView, type RunOptions, type RunView, type StepLogEnd } from './types.ts';

export class EmbeddedBackend implements Backend {
  readonly kind = 'embedded';
  private opened: Promise<EngineHandle> | undefined;
  /** Every event since the engine opened, so that a watch begun after a start misses none of its steps. */
  private readonly events: EngineEvent[] = [];
  private readonly listeners = new Set<(event: EngineEvent) => void>();

  constructor(private readonly config: Omit<TroupeConfig, 'host' | 'port'>) {}

  /**
   * The engine, opened at the first verb that needs it (help and errors never take the lock).
   * `runs`: the verb is about to run steps, so a step thread and its host start meanwhile.
   */
  handle(runs = false): Promise<EngineHandle> {
    // The engine's log (a step process a crash left, a log file it cannot write) goes to stderr:
    // stdout is the verb's output, and `--json` is read by programs.
    if (!this.opened) logToStderr();
    // A new home gets the example DAG, as from `troupe server`: `troupe start example` works first.
    return (this.opened ??= openEngine({ ...this.config, commandOnly: true, writeExample: true }, { warm: runs }).then((handle) => {
      handle.engine.subscribe((event) => {
        this.events.push(event);
        for (const listener of this.listeners) listener(event);
      });
      return handle;
    }));
  }

  async start(dag: DagRef, options: RunOptions): Promise<{ dagRunId: string }> {
    const { engine } = await this.handle(true);
    if (dag.kind === 'stored') return engine.startDag(dag.fileName, options);
    return engine.startInline({ spec: dag.spec, name: options.dagName ?? dag.name, params: options.params, dagRunId: options.dagRunId });
  }

  async enqueue(dag: DagRef, options: RunOptions): Promise<{ dagRunId: string }> {
    const { engine } = await this.handle();
    if (dag.kind === 'stored') return engine.enqueueDag(dag.fileName, options);
    return engine.enqueueInline({ spec: dag.spec, name: options.dagName ?? dag.name, params: options.params, dagRunId: options.dagRunId, queue: options.queue });
  }

  async startSpec(spec: string, options: RunOptions & { name: string }): Promise<{ dagRunId: string }> {
    const { engine } = await this.handle(true);
    return engine.startInline({ spec, name: options.name, params: options.params, dagRunId: options.dagRunId });
  }

  async dequeue(name: string, dagRunId: string): Promise<void> {
    await (await this.handle()).engine.dequeue(name, dagRunId);
  }

  async run(name: string, dagRunId: string): Promise<RunView> {
    const { engine } = await this.handle();
    return marked(engine, runView(engine.findRun(name, dagRunId)));
  }

  async runs(name?: string, filter: { status?: number; limit?: number } = {}): Promise<RunView[]> {
    const { engine, runs } = await this.handle();
    const rows = runs.summaries({ ...(name === undefined ? {} : { name }), ...(filter.status === undefined ? {} : { status: filter.status as RunStatus }) }).runs;
    const found: RunView[] = [];
    // Summary rows first (no nodes read), then whole records for the ones shown.
    for (const row of rows) {
      if (filter.limit !== undefined && found.length >= filter.limit) break;
      const record = runs.get(row.name, row.dagRunId);
      // As the API's listings: summaries, without nodes.
      if (record && record.parentDAGRunId === '') found.push(marked(engine, { ...runView(record), nodes: [] }));
    }
    return found;
  }

  async stop(name: string, dagRunId: string): Promise<void> {
    const { engine } = await this.handle();
    const record = engine.findRun(name, dagRunId);
    if (interrupted(engine, record)) {
      throw new CliError(`dag-run ${record.name} ${record.dagRunId} is not running: the server that ran it stopped without ending it, and no server runs on the home now`,
        'start `troupe server` on the home, which resumes or settles it, and stop it there');
    }
    await engine.stop(name, dagRunId);
    await engine.whenFinished(record.name, record.dagRunId);
  }

  async retry(name: string, dagRunId: string, options: { stepName?: string }): Promise<void> {
    await (await this.handle(true)).engine.retry(name, dagRunId, options);
  }

  async reschedule(name: string, dagRunId: string, options: { dagRunId?: string }): Promise<{ dagRunId: string; queued: boolean }> {
    return (await this.handle()).engine.reschedule(name, dagRunId, options);
  }

  async stepLogPage(name: string, dagRunId: string, stepName: string, stream: 'stdout' | 'stderr', query: LogPageQuery): Promise<LogPage> {
    const { engine, logs } = await this.handle();
    const run = engine.findRun(name, dagRunId);
    const node = nodeOf(run, stepName);
    if (!node) throw new AppError('not_found', `step ${stepName} not found in DAG ${name}`);
    const path = stream === 'stdout' ? node.stdout : node.stderr;
    const none = { content: '', lineCount: 0, hasMore: false, totalLines: 0, isEstimate: false, nextOffset: 0 };
    // As the step log endpoint: a running step's last line may be half written.
    const ended = node.status !== NodeStatus.Running || isFinalRunStatus(run.status);
    return path === '' ? none : (await logs.read(path, { ...query, limit: LOG_PAGE_LINES, ended })) ?? none;
  }

  async followStepLog(name: string, dagRunId: string, stepName: string, stream: 'stdout' | 'stderr', onLine: (line: string) => void,
    options?: FollowLogOptions): Promise<StepLogEnd> {
    const handle = await this.handle();
    const listen = (listener: (event: EngineEvent) => void) => {
      this.listeners.add(listener);
      return () => { this.listeners.delete(listener); };
    };
    return followStepFile(handle, listen, { name, dagRunId, stepName, stream }, onLine, options);
  }

  /** Through the retention sweeper, as the server's `POST /dag-runs/cleanup`. */
  async cleanup(name: string, options: { retentionDays: number; dryRun: boolean }): Promise<CleanupView> {
    const { retention } = await this.handle();
    return { dryRun: options.dryRun, ...(await retention.cleanup({ name, ...options })) };
  }

  /** From the engine's events as they happen; the final details are read once the end is stored. */
  async watch(name: string, dagRunId: string, onChange: (run: RunView) => void): Promise<RunView> {
    const { engine } = await this.handle();
    let current = storedRun(engine, name, dagRunId) ?? emptyRun(name, dagRunId);
    const ours = (event: EngineEvent) => 'dagRunId' in event && event.name === name && event.dagRunId === dagRunId;
    for (const event of this.events.filter(ours)) current = applyEvent(current, event);
    const listener = (event: EngineEvent) => {
      if (!ours(event)) return;
      current = applyEvent(current, event);
      onChange(current);
    };
    this.listeners.add(listener);
    try {
      onChange(current);
      await engine.whenFinished(name, dagRunId);
    } finally {
      this.listeners.delete(listener);
    }
    const final = runView(engine.findRun(name, dagRunId));
    if (!isFinalRunStatus(final.status as 0)) throw new AppError('internal_error', `dag-run ${dagRunId} ended without a final status`);
    return final;
  }

  async close(): Promise<void> {
    if (this.opened) await (await this.opened).close();
  }
}

/** Recorded running, but not run by this engine: a server that crashed left it (the command's engine recovers nothing). */
function interrupted(engine: EngineHandle['engine'], run: { name: string; dagRunId: string; status: number }): boolean {
  return run.status === RunStatus.Running && !engine.isActive(run.name, run.dagRunId);
}

function marked(engine: EngineHandle['engine'], run: RunView): RunView {
  return interrupted(engine, run) ? { ...run, interrupted: true } : run;
}

/** The run as stored, or undefined while its first record is not committed yet. */
function storedRun(engine: EngineHandle['engine'], name: string, dagRunId: string): RunView | undefined {
  try {
    return runView(engine.findRun(name, dagRunId));
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return undefined;
    throw error;
  }
}

function emptyRun(name: string, dagRunId: string): RunView {
  return { name, dagRunId, status: 0, statusLabel: 'not_started', queuedAt: '', startedAt: '', finishedAt: '', log: '', params: '', nodes: [] };
}

function applyEvent(run: RunView, event: EngineEvent): RunView {
  if (isRunEvent(event)) {
    return { ...run, status: event.status, statusLabel: runStatusLabel(event.status as 0), startedAt: startedOf(event) ?? run.startedAt, finishedAt: finishedOf(event) ?? run.finishedAt };
  }
  if (!('stepName' in event)) return run;
  const index = run.nodes.findIndex((node) => node.step.name === event.stepName);
  const node: NodeView = index >= 0 ? run.nodes[index] : { step: { name: event.stepName }, status: 0, statusLabel: 'not_started', startedAt: '', finishedAt: '', error: '', stdout: '', stderr: '' };
  const next = { ...node, status: event.status, statusLabel: nodeStatusLabel(event.status as 0), startedAt: event.startedAt, finishedAt: event.finishedAt, error: event.error };
  const nodes = run.nodes.slice();
  if (index >= 0) nodes[index] = next;
  else nodes.push(next);
  return { ...run, nodes };
}

function startedOf(event: EngineEvent): string | undefined {
  return 'startedAt' in event ? event.startedAt : undefined;
}

function finishedOf(event: EngineEvent): string | undefined {
  return 'finishedAt' in event ? event.finishedAt : undefined;
}

/** A record in the API's shape of run details (the fields the command shows; the handlers' nodes are not steps). */
export function runView(record: RunRecord): RunView {
  return {
    name: record.name, dagRunId: record.dagRunId, status: record.status, statusLabel: runStatusLabel(record.status),
    queuedAt: record.queuedAt, startedAt: record.startedAt, finishedAt: record.finishedAt, log: record.log, params: record.params,
    ...(record.workerId !== undefined ? { workerId: record.workerId } : {}),
    nodes: record.nodes.map((node) => ({
      step: { name: node.step.name }, status: node.status, statusLabel: nodeStatusLabel(node.status),
      startedAt: node.startedAt, finishedAt: node.finishedAt, error: node.error, stdout: node.stdout, stderr: node.stderr,
    })),
  };
}
