// The server's side of distributed dispatch: runs the scheduler placed on a worker are handed to
// that worker's queue, stopped through its control channel, and what they report comes back on
// the record stream and is applied here as a local run's reports are (records, log lines, output
// files, the end). The workers' list is kept from their heartbeats: each heartbeat is announced on
// a channel, and the list is read again when one arrives, so a run waiting for a worker goes as
// soon as one appears.
import { dirname } from 'node:path';
import type { Redis } from 'ioredis';
import type { RemotePorts, RemoteRunDispatcher, RunInput, RunReports } from '../actors/index.ts';
import { maskedRedisUrl, runKey, subRunsUnder, type RunRecord, type WorkerView } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';
import { RecordInbox, RunJobs, appliedFrom, listWorkers, workerView, type ListedWorker, type StreamItem } from '../workers/index.ts';
import { ReportApplier, type HandedRun } from './apply-reports.ts';
import { APPLIED_HASH, CONTROL_CHANNEL, HANDED_SET, HEARTBEAT_CHANNEL, type StopMessage } from './channels.ts';
import { attemptKey, isUnder, type Roots, type RunPayload } from './payload.ts';
import { redisConnection, within } from './redis-connection.ts';

/** How often the list is read when no heartbeat announces itself: a worker that went silent is seen aging. */
const LIST_REFRESH_MS = 5_000;


interface Handed extends HandedRun {
  attempt: string;
  /** The process of the worker it was handed to ('' for a run taken back after a restart, until its worker is heard). */
  incarnation: string;
}

export interface RemoteRunsOptions {
  redisUrl: string;
  /** The server's folders: what a run's paths are under here. */
  roots: Roots;
  closeRunLog(path: string): Promise<void>;
  /** How long a worker may go without a heartbeat before its runs are settled as lost. Default 60 s. */
  lostAfterMs?: number;
  /** The DAG files a definition calls (file name -> text), a variable target named by the run's `variables`: they travel with the run. */
  calledDags(specText: string, variables: Readonly<Record<string, string>>): Promise<Record<string, string>>;
  /** The part of this server's environment a run's steps see: a worker puts its own in its place. */
  systemEnv: Record<string, string>;
  /** A run's stored record (a retried run's earlier sub DAG runs are read with it). */
  storedRun(name: string, dagRunId: string): RunRecord | undefined;
}

export class RemoteRuns implements RemoteRunDispatcher {
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly inbox: RecordInbox;
  private readonly jobs: RunJobs<RunPayload>;
  private readonly applier: ReportApplier;
  /** Attempts handed out and not ended, by attempt key; the runs' keys to their attempts. */
  private readonly handed = new Map<string, Handed>();
  private readonly attemptOf = new Map<string, string>();
  /** The newest sequence number applied, per attempt. */
  private readonly applied = new Map<string, number>();
  /** Attempts forgotten whose marks in Redis are not taken out yet. */
  private readonly forgotten: string[] = [];
  private list: readonly ListedWorker[] = [];
  /** Workers whose runs were settled as lost: none is placed on them until they are heard again. */
  private readonly lost = new Set<string>();
  /**
   * Each worker's newest heartbeat seen, and when (this process's clock) it was first seen; kept
   * while Redis lists the worker, so that an old heartbeat is never taken for a new one.
   */
  private readonly beats = new Map<string, { beat: string; seenAt: number }>();
  private reading: Promise<void> | undefined;
  private readAgain = false;
  private refresh: NodeJS.Timeout | undefined;
  private closed = false;

  private readonly reports: RunReports;

  constructor(private readonly options: RemoteRunsOptions, private readonly ports: RemotePorts) {
    const { reports } = ports;
    this.reports = reports;
    const shown = maskedRedisUrl(options.redisUrl);
    const onError = (what: string) => (error: Error) => { if (!this.closed) log.warn({ redis: shown, error: errorText(error) }, what); };
    // Commands wait for a connection rather than fail while Redis is away; the inbox's reads fail at once and are tried again.
    this.commands = redisConnection(options.redisUrl, { waitForConnection: true });
    this.commands.on('error', onError('Redis is not reachable: runs placed on workers wait for it'));
    // While Redis is out of reach no heartbeat can be heard: a worker's silence counts from its return.
    this.commands.on('ready', () => {
      const now = Date.now();
      for (const seen of this.beats.values()) seen.seenAt = Math.max(seen.seenAt, now);
    });
    this.subscriber = redisConnection(options.redisUrl, { waitForConnection: true });
    this.subscriber.on('error', () => undefined);
    this.jobs = new RunJobs(this.commands);
    this.applier = new ReportApplier(options.roots, { reports, closeRunLog: (path) => options.closeRunLog(path) });
    const inboxConnection = redisConnection(options.redisUrl, { waitForConnection: false });
    // Its failures are the inbox's own (onError, below).
    inboxConnection.on('error', () => undefined);
    this.inbox = new RecordInbox(inboxConnection, {
      apply: (items) => this.apply(items),
      appliedSeq: (attempt) => this.applied.get(attempt) ?? 0,
      isCurrent: (attempt) => this.handed.has(attempt),
      appliedKey: APPLIED_HASH,
      onError: onError('the record stream could not be read: tried again in a moment'),
    });
  }

  holds(name: string, dagRunId: string): boolean {
    return this.attemptOf.has(runKey(name, dagRunId));
  }

  adopt(record: RunRecord): void {
    const worker = record.workerId!;
    const attempt = attemptKey(record);
    this.handed.set(attempt, handedOf(record, worker, attempt, ''));
    this.attemptOf.set(runKey(record.name, record.dagRunId), attempt);
    // Its worker's silence is timed from now: a worker that died meanwhile is found lost after lostAfterMs.
    if (!this.beats.has(worker)) this.beats.set(worker, { beat: '', seenAt: Date.now() });
  }

  /** Connects, reads the workers, and starts hearing heartbeats and records. */
  async connect(): Promise<void> {
    // Nothing here waits for Redis: a server started while Redis is away serves, and hears the workers once it is back.
    this.subscriber.on('message', () => this.readWorkers());
    this.subscriber.subscribe(HEARTBEAT_CHANNEL).catch((error: Error) => log.warn({ error: errorText(error) }, 'the workers\' heartbeats cannot be heard'));
    this.readWorkers();
    this.refresh = setInterval(() => this.readWorkers(), Math.min(LIST_REFRESH_MS, Math.max(100, this.lostAfterMs / 4))).unref();
    // What a previous process applied is read first: the stream's entries it had not acknowledged are not applied twice.
    void appliedFrom(this.commands, APPLIED_HASH).then((applied) => {
      for (const [attempt, seq] of applied) if (this.handed.has(attempt)) this.applied.set(attempt, Math.max(seq, this.applied.get(attempt) ?? 0));
    }, (error: unknown) => log.warn({ error: errorText(error) }, 'what was applied before could not be read: entries are applied as they come')).then(() => {
      if (!this.closed) this.inbox.start();
    });
  }

  /** The workers a run may be placed on: heard from, not draining, not found lost since. */
  workers(): readonly WorkerView[] {
    return this.list.filter((worker) => !worker.draining && !this.lost.has(worker.id));
  }

  /** Every worker as last heard (the metrics'). */
  listed(): readonly WorkerView[] {
    return this.list;
  }

  /** The workers as Redis has them now; throws at once when Redis is out of reach (a read must not wait for it). */
  async currentWorkers(): Promise<WorkerView[]> {
    if (this.commands.status !== 'ready') throw new Error(`Redis at ${maskedRedisUrl(this.options.redisUrl)} is not reachable (${this.commands.status})`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('Redis did not answer within 2 s')), 2_000); });
    try {
      return (await Promise.race([listWorkers(this.commands), late])).map(workerView);
    } finally {
      clearTimeout(timer);
    }
  }

  start(run: RunInput, worker?: string): void {
    if (worker === undefined) throw new Error('a run without a worker was handed to the remote dispatcher');
    const record = { ...run.record, workerId: worker };
    const attempt = attemptKey(record);
    const { workerSelector: _selector, ...plan } = run.plan;
    const incarnation = this.list.find((listed) => listed.id === worker)?.incarnation ?? '';
    this.handed.set(attempt, handedOf(record, worker, attempt, incarnation));
    this.attemptOf.set(runKey(record.name, record.dagRunId), attempt);
    // A worker counts as heard from as the run is handed to it: its silence is timed from here at the earliest.
    if (!this.beats.has(worker)) this.beats.set(worker, { beat: '', seenAt: Date.now() });
    const input = { ...run, record, plan: { ...plan, worker } };
    // A first attempt has none: only a retried or resumed run reads the store here.
    const subRuns = record.children ? subRunsCalledAgain(record, (name, dagRunId) => this.options.storedRun(name, dagRunId)) : [];
    this.options.calledDags(plan.specText, plan.baseEnv)
      .then(async (dagFiles) => {
        const payload: RunPayload = { input, roots: rootsOf(record, this.options.roots), dagFiles, systemEnv: this.options.systemEnv, incarnation, ...(subRuns.length > 0 ? { subRuns } : {}) };
        // On one connection, in order: the attempt is in the set before its job is in the queue, without a round trip between.
        await Promise.all([this.commands.sadd(HANDED_SET, attempt), this.jobs.hand(worker, attempt, payload)]);
      }).catch((error: unknown) => {
      log.error({ dag: record.name, dagRunId: record.dagRunId, worker, error: errorText(error) }, 'the run could not be handed to its worker');
    });
  }

  stop(name: string, dagRunId: string, at: number): void {
    const attempt = this.attemptOf.get(runKey(name, dagRunId));
    const handed = attempt ? this.handed.get(attempt) : undefined;
    if (!handed) return;
    const message: StopMessage = { kind: 'stop', attempt: handed.attempt, at };
    this.commands.publish(CONTROL_CHANNEL(handed.worker), JSON.stringify(message)).catch((error: unknown) => {
      log.warn({ dag: name, dagRunId, worker: handed.worker, error: errorText(error) }, 'the stop could not reach the worker');
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.refresh);
    await this.inbox.close();
    await within(this.sayForgotten(), 1_000);
    await this.jobs.close().catch(() => undefined);
    this.subscriber.disconnect();
    this.commands.disconnect();
  }

  /** Reads the list once; a heartbeat heard meanwhile reads it once more after. */
  private readWorkers(): void {
    if (this.closed) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = listWorkers(this.commands).then((workers) => {
      const changed = JSON.stringify(workers.map(placementOf)) !== JSON.stringify(this.list.map(placementOf));
      this.list = workers;
      const now = Date.now();
      const listed = new Set(workers.map((worker) => worker.id));
      for (const id of this.beats.keys()) if (!listed.has(id) && !this.holdsRunsOn(id)) this.beats.delete(id);
      for (const worker of workers) {
        if (this.beats.get(worker.id)?.beat === worker.lastHeartbeatAt) continue;
        this.beats.set(worker.id, { beat: worker.lastHeartbeatAt, seenAt: now });
        this.lost.delete(worker.id);
      }
      this.settleRestarted(workers);
      this.settleLost(now);
      if (changed) this.ports.workersChanged();
    }, () => undefined).finally(() => {
      this.reading = undefined;
      if (this.readAgain) {
        this.readAgain = false;
        this.readWorkers();
      }
    });
  }

  private get lostAfterMs(): number {
    return this.options.lostAfterMs ?? 60_000;
  }

  /**
   * A worker heard with another process than the one its runs were handed to started again: those
   * runs died with the earlier process, and are settled at once.
   */
  private settleRestarted(workers: readonly ListedWorker[]): void {
    const current = new Map(workers.map((worker) => [worker.id, worker.incarnation]));
    for (const handed of [...this.handed.values()]) {
      const now = current.get(handed.worker);
      if (now === undefined || now === '') continue;
      // Taken back after this server's restart: its worker's process is the one heard first.
      if (handed.incarnation === '') handed.incarnation = now;
      if (handed.incarnation === now) continue;
      this.lose(handed, `worker ${handed.worker} started again: the runs of its previous process went with it`);
    }
  }

  private holdsRunsOn(worker: string): boolean {
    for (const handed of this.handed.values()) if (handed.worker === worker) return true;
    return false;
  }

  /** Nothing more of the attempt is applied; a job not taken yet is withdrawn; the engine settles the run. */
  private lose(handed: Handed, reason: string): void {
    this.forget(handed);
    void this.jobs.withdraw(handed.worker, handed.attempt).catch(() => undefined);
    log.warn({ dag: handed.name, dagRunId: handed.dagRunId, worker: handed.worker }, reason);
    this.ports.workerLost(handed.name, handed.dagRunId, reason);
  }

  /**
   * The runs of workers not heard from for lostAfterMs (gone from the list, or their heartbeat
   * unchanged) are theirs no more: nothing more of their attempts is applied, a job not taken yet
   * is withdrawn, and the engine settles them. Timed by this process's clock alone.
   */
  private settleLost(now: number): void {
    const silent = new Set<string>();
    for (const [worker, seen] of this.beats) if (now - seen.seenAt >= this.lostAfterMs) silent.add(worker);
    if (silent.size === 0) return;
    for (const handed of [...this.handed.values()]) {
      if (!silent.has(handed.worker)) continue;
      // No run goes back to it (its health may not say unhealthy yet) until it is heard again.
      this.lost.add(handed.worker);
      this.lose(handed, `worker ${handed.worker} went away: no heartbeat for ${Math.round(this.lostAfterMs / 1000)} s`);
    }
  }

  /** The attempt is over for this server: its items are dropped from now on. */
  private forget(handed: Handed): void {
    this.handed.delete(handed.attempt);
    this.attemptOf.delete(runKey(handed.name, handed.dagRunId));
    this.applied.delete(handed.attempt);
    // Those forgotten in one turn of the event loop (a batch's ends, say) leave Redis in one transaction.
    if (this.forgotten.push(handed.attempt) === 1) setImmediate(() => void this.sayForgotten());
  }

  private sayForgotten(): Promise<void> {
    const attempts = this.forgotten.splice(0);
    if (attempts.length === 0) return Promise.resolve();
    return this.commands.multi().srem(HANDED_SET, ...attempts).hdel(APPLIED_HASH, ...attempts).exec().then(() => undefined, () => undefined);
  }

  /** A batch from the stream, applied in order; done once its records are stored. */
  private async apply(items: StreamItem[]): Promise<void> {
    const touched = new Set<string>();
    for (const item of items) {
      const handed = this.handed.get(item.attempt);
      if (!handed) continue;
      const outcome = await this.applier.apply(item, handed);
      if (outcome.run) touched.add(runKey(outcome.run.name, outcome.run.dagRunId));
      this.applied.set(item.attempt, item.seq);
      if (outcome.ended) this.forget(handed);
    }
    await Promise.all([...touched].map((key) => {
      const [name, dagRunId] = key.split('\u0000');
      return this.reports.stored?.(name, dagRunId);
    }));
  }
}

/**
 * The stored sub DAG runs an attempt may call again, at any depth: those its kept nodes started
 * are not (a kept node does not run again), so a retry of one failed call among many hands one.
 */
function subRunsCalledAgain(record: RunRecord, lookup: (name: string, dagRunId: string) => RunRecord | undefined): RunRecord[] {
  const kept = new Set(record.nodes.flatMap((node) => [...node.subRuns, ...node.subRunsRepeated].map((run) => run.dagRunId)));
  const children = Object.fromEntries(Object.entries(record.children ?? {}).filter(([dagRunId]) => !kept.has(dagRunId)));
  return subRunsUnder({ ...record, children }, lookup);
}

/** The server's folders for the run: its own log folder too, when its DAG's logDir is outside the logs folder. */
function rootsOf(record: RunRecord, roots: Roots): Roots {
  const folder = dirname(record.log);
  return record.log === '' || isUnder(roots.logs, folder) ? roots : { runLogs: folder, ...roots };
}

function handedOf(record: RunRecord, worker: string, attempt: string, incarnation: string): Handed {
  const root = { name: record.rootDAGRunName || record.name, dagRunId: record.rootDAGRunId || record.dagRunId };
  return { name: record.name, dagRunId: record.dagRunId, root, worker, attempt, incarnation, logFolder: dirname(record.log) };
}

/** What placement reads of a worker: a change to any of it may let a waiting run go. */
const placementOf = (worker: WorkerView) => [worker.id, worker.labels, worker.totalPollers, worker.busyPollers, worker.healthStatus];
