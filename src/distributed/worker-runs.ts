// The worker's side of distributed dispatch: it says who it is every second (labels, limit, the
// runs it holds), takes the runs handed to its queue, at most its limit at once, runs each with its
// own engine under its own folders, and sends everything the run reports back on the record
// stream, in order: records, log lines, the new bytes of its steps' output files, its end.
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { RunFinishedEvent, RunInput, RunReports } from '../actors/index.ts';
import { NodeStatus, dagNameProblem, fileSafe, maskedRedisUrl, runKey, type RunRecord, type RunningTask } from '../core/index.ts';
import { errorText, log } from '../logging/index.ts';
import { RecordOutbox, RunJobTaker, heartbeat, leave } from '../workers/index.ts';
import { CONTROL_CHANNEL, HANDED_SET, HEARTBEAT_CHANNEL, type StopMessage } from './channels.ts';
import { KeptRuns, type RunName, type WorkerStore } from './kept-runs.ts';
import { attemptKey, movePaths, withSystemEnv, type Report, type Roots, type RunPayload } from './payload.ts';
import { redisConnection, within } from './redis-connection.ts';

const HEARTBEAT_MS = 1_000;
/** How soon a change of the runs held is told, at most (BEAT_SOON_MS of changes go in one heartbeat). */
const BEAT_SOON_MS = 100;
/** How often the steps' output files are read for new bytes. */
const OUTPUT_READ_MS = 100;
/** How long a drain waits, after the grace, for the stopped runs to end and their reports to be sent. */
const FLUSH_MS = 10_000;
/** Where, under the worker's logs folder, the log folders of DAGs with a `logDir` of their own go. */
const OWN_LOG_DIRS = '.log-dirs';
/** How many log folders are remembered as made (one per DAG, usually). */
const KEPT_LOG_FOLDERS = 1_000;
/** The most bytes of one file sent in one item. */
const OUTPUT_CHUNK = 256 * 1024;
/**
 * A drain takes the runs handed before the server heard it until its queue has been empty this
 * long (a hand the server decided a moment before may still be on its way), for the grace or
 * HANDED_WAIT_MS, whichever is longer.
 */
const HANDED_QUIET_MS = 500;
const HANDED_WAIT_MS = 3_000;

/** What the worker asks of its engine. */
export interface WorkerEngine {
  runPlanned(input: RunInput): Promise<void>;
  stop(name: string, dagRunId: string): Promise<void>;
  whenFinished(name: string, dagRunId: string): Promise<void>;
}

export interface WorkerRunsOptions {
  redisUrl: string;
  id: string;
  labels: Record<string, string>;
  maxActiveRuns: number;
  /** The worker's own folders, where it moves the runs' paths. */
  roots: Roots;
  /** How many finished runs (their trees) keep their files and records here. */
  keepRuns: number;
  /** The part of the worker's environment its runs' steps see (PATH, HOME...). */
  systemEnv: Record<string, string>;
}

interface Held {
  attempt: string;
  name: string;
  dagRunId: string;
  startedAt: string;
  /** The server's folders, where the run's paths go back to; this worker's for the run, where they were moved. */
  serverRoots: Roots;
  roots: Roots;
  /** Resolves once the run's end is on the stream. */
  sent: Promise<void>;
  endSent(): void;
  /** The server settled it meanwhile: stopped here. */
  settled?: boolean;
  /** The runs of its tree here, by key: itself first, then its sub DAG runs (those that began, those an earlier attempt left). */
  runs: Map<string, RunName>;
}

interface Tail {
  held: Held;
  offset: number;
}

export class WorkerRuns {
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly outbox: RecordOutbox;
  private taker: RunJobTaker<RunPayload> | undefined;
  private takerConnection: Redis | undefined;
  private engine: WorkerEngine | undefined;
  /** Runs held, by their root run's key. */
  private readonly held = new Map<string, Held>();
  /** Every run of a held run's tree (the held run, its sub DAG runs, theirs) -> the held run. */
  private readonly trees = new Map<string, Held>();
  /** The run log files of held runs' trees (this worker's paths) -> their run. */
  private readonly runLogs = new Map<string, Held>();
  /** Output files being sent, by this worker's path. */
  private readonly tails = new Map<string, Tail>();
  /** The log folders made so far. */
  private readonly logFolders = new Set<string>();
  private beat: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  private reader: NodeJS.Timeout | undefined;
  /** Everything sent goes through here, one step after the other: the stream holds it in the order it happened. */
  private sending: Promise<void> = Promise.resolve();
  private stopped = false;
  private draining = false;
  /** A drain's grace is over: a run taken from now on is stopped as it begins. */
  private graceOver = false;
  /** Jobs taken and not settled (a held run, or one being checked before it is held). */
  private taking = 0;
  private readonly idleWaiters: Array<() => void> = [];
  /** This process: a job handed to an earlier process of the same worker id is not run here. */
  private readonly incarnation = randomUUID();
  /** The finished runs whose copies are kept here; none are removed when start is given no store. */
  private kept: KeptRuns | undefined;
  private store: WorkerStore | undefined;

  constructor(private readonly options: WorkerRunsOptions) {
    const shown = maskedRedisUrl(options.redisUrl);
    this.commands = redisConnection(options.redisUrl, { waitForConnection: true });
    // Said once per outage, not at every attempt to reconnect.
    let reachable = true;
    this.commands.on('ready', () => { reachable = true; });
    this.commands.on('error', (error: Error) => {
      if (this.stopped || !reachable) return;
      reachable = false;
      log.warn({ redis: shown, error: errorText(error) }, 'Redis is not reachable: what the runs report waits for it, and no run is taken meanwhile');
    });
    this.subscriber = redisConnection(options.redisUrl, { waitForConnection: true });
    this.subscriber.on('error', () => undefined);
    this.outbox = new RecordOutbox(this.commands);
  }

  /** What the engine's runs report here goes to the server too (give it to the engine as it is built). */
  relay(local: RunReports): RunReports {
    return {
      record: (record, changed) => {
        local.record(record, changed);
        this.relayRecord(record, changed);
      },
      // A run's log is written where it is kept, on the server: none here.
      logLine: (path, line) => {
        const held = this.runLogs.get(path);
        if (held) this.inOrder(() => { void this.append(held, { kind: 'log', path: this.toServer(held, path), line }); });
        else local.logLine(path, line);
      },
      finished: (end) => {
        local.finished(end);
        this.relayEnd(end);
      },
      ...(local.stored ? { stored: local.stored } : {}),
      // A traced run's spans leave from the worker, to the collector its plan names.
      ...(local.span ? { span: local.span } : {}),
    };
  }

  /** A run of the engine begins (a held run, or a sub DAG run of one): its log lines are known as its tree's from now on. */
  dispatching(run: RunInput): void {
    const held = this.treeOf(run.record);
    if (!held) return;
    const key = runKey(run.record.name, run.record.dagRunId);
    held.runs.set(key, { name: run.record.name, dagRunId: run.record.dagRunId });
    this.trees.set(key, held);
    this.runLogs.set(run.record.log, held);
  }

  /** The held run whose tree a run belongs to: itself, or its parent's (whose run began first). */
  private treeOf(record: RunRecord): Held | undefined {
    return this.trees.get(runKey(record.name, record.dagRunId))
      ?? (record.parentDAGRunId ? this.trees.get(runKey(record.parentDAGRunName, record.parentDAGRunId)) : undefined);
  }

  /**
   * Starts taking runs with `engine`. `store`: the engine's store, where a retried run's earlier sub
   * DAG runs are put, and whose copies of finished runs beyond the newest `keepRuns` are removed.
   */
  async start(engine: WorkerEngine, store?: WorkerStore): Promise<void> {
    this.engine = engine;
    if (store) {
      this.store = store;
      this.kept = new KeptRuns(this.options.keepRuns, store.forget, (key) => this.held.has(key));
    }
    this.subscriber.on('message', (_channel: string, text: string) => this.control(text));
    // Nothing here waits for Redis: a worker started while it is away takes runs once it is back, and drains meanwhile.
    this.subscriber.subscribe(CONTROL_CHANNEL(this.options.id)).catch(() => undefined);
    void this.sayAlive();
    this.beat = setInterval(() => { void this.sayAlive(); }, HEARTBEAT_MS);
    this.reader = setInterval(() => this.inOrder(() => this.readOutputs()), OUTPUT_READ_MS);
    const connection = this.takerConnection = redisConnection(this.options.redisUrl, { waitForConnection: true });
    connection.on('error', () => undefined);
    this.taker = new RunJobTaker<RunPayload>(connection, {
      workerId: this.options.id, maxActiveRuns: this.options.maxActiveRuns,
      run: (payload) => this.run(payload),
      onError: (error) => { if (!this.stopped) log.warn({ error: errorText(error) }, 'taking runs failed: tried again'); },
    });
    this.taker.start();
  }

  /** Takes nothing new; the runs under way get `graceMs` to finish, then are stopped; then it leaves. */
  async drain(graceMs: number): Promise<void> {
    const graceEnds = Date.now() + graceMs;
    // Said at once: the server places nothing more here.
    this.draining = true;
    await within(this.sayAlive(), 1_000);
    // What was handed before the server heard it is this worker's to run (or to stop, past the grace): left in
    // the queue, it would wait for workerLostSec and fail.
    await this.takeWhatWasHanded(Math.max(graceEnds, Date.now() + HANDED_WAIT_MS));
    // BullMQ takes nothing new from here; its close waits on its connection, which Redis being away can hold forever.
    const taking = this.taker?.drain() ?? Promise.resolve();
    await this.idleWithin(graceEnds - Date.now());
    this.graceOver = true;
    for (const held of this.held.values()) await this.engine?.stop(held.name, held.dagRunId).catch(() => undefined);
    // The runs stopped end, and what they reported is sent, while Redis answers.
    await this.idleWithin(FLUSH_MS);
    await within(taking, 1_000);
    this.stopped = true;
    clearInterval(this.beat);
    clearTimeout(this.soon);
    clearInterval(this.reader);
    await within(this.sending.then(() => this.outbox.idle()), 1_000);
    await within(this.kept?.idle() ?? Promise.resolve(), 2_000);
    await within(leave(this.commands, this.options.id).catch(() => undefined), 2_000);
    this.takerConnection?.disconnect();
    this.subscriber.disconnect();
    this.commands.disconnect();
  }

  /** Resolves once no job is taken, or after `ms`. */
  private idleWithin(ms: number): Promise<void> {
    if (this.taking === 0) return Promise.resolve();
    return within(new Promise<void>((resolve) => this.idleWaiters.push(resolve)), Math.max(0, ms));
  }

  /** Keeps taking until this worker's queue has stayed empty for HANDED_QUIET_MS, or `deadline`. */
  private async takeWhatWasHanded(deadline: number): Promise<void> {
    const taker = this.taker;
    if (!taker) return;
    let emptySince: number | undefined;
    while (Date.now() < deadline) {
      // Redis away: nothing can be taken from it either.
      const waiting = await Promise.race([taker.waiting().catch(() => 0), pause(1_000).then(() => 0)]);
      if (waiting > 0) emptySince = undefined;
      else if (Date.now() - (emptySince ??= Date.now()) >= HANDED_QUIET_MS) return;
      await pause(100);
    }
  }

  private async run(payload: RunPayload): Promise<void> {
    this.taking++;
    try {
      await this.runTaken(payload);
    } finally {
      this.taking--;
      if (this.taking === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async runTaken(payload: RunPayload): Promise<void> {
    const engine = this.engine!;
    const roots = this.rootsFor(payload);
    const input = withSystemEnv(movePaths(payload.input, payload.roots, roots), movePaths(payload.systemEnv ?? {}, payload.roots, roots), this.options.systemEnv);
    const { name, dagRunId } = input.record;
    if (payload.incarnation && payload.incarnation !== this.incarnation) {
      log.warn({ dag: name, dagRunId }, 'a run handed to an earlier process of this worker was not run (the server settles it)');
      return;
    }
    // Its folders and the DAG files it calls are made while the server's set is asked: a run it does not hold leaves only those.
    const prepared = Promise.all([this.logFolder(dirname(input.plan.logPath)), this.writeDagFiles(payload.dagFiles ?? {})]);
    prepared.catch(() => undefined);
    if (!(await this.commands.sismember(HANDED_SET, attemptKey(input.record)))) {
      log.warn({ dag: name, dagRunId, attempt: input.record.attemptId }, 'a run the server no longer counts on this worker was not run (it was settled meanwhile)');
      return;
    }
    let endSent = () => {};
    const sent = new Promise<void>((resolve) => { endSent = resolve; });
    const held: Held = { attempt: attemptKey(input.record), name, dagRunId, startedAt: new Date().toISOString(), serverRoots: payload.roots, roots, sent, endSent, runs: new Map([[runKey(name, dagRunId), { name, dagRunId }]]) };
    this.held.set(runKey(name, dagRunId), held);
    this.trees.set(runKey(name, dagRunId), held);
    this.runLogs.set(input.record.log, held);
    this.sayAliveSoon();
    // A retried call goes on from its sub DAG run's earlier attempt, found in this engine's store.
    const subRuns = movePaths(payload.subRuns ?? [], payload.roots, roots);
    for (const run of subRuns) held.runs.set(runKey(run.name, run.dagRunId), { name: run.name, dagRunId: run.dagRunId });
    try {
      await Promise.all([prepared, subRuns.length > 0 ? this.store?.keep(subRuns) : undefined]);
      await engine.runPlanned(input);
      if (this.graceOver) void engine.stop(name, dagRunId).catch(() => undefined);
      await engine.whenFinished(name, dagRunId);
      await sent;
    } catch (error) {
      log.error({ dag: name, dagRunId, error: errorText(error) }, 'the run could not run on this worker');
      throw error;
    } finally {
      this.held.delete(runKey(name, dagRunId));
      for (const [key, owner] of this.trees) if (owner === held) this.trees.delete(key);
      for (const [path, owner] of this.runLogs) if (owner === held) this.runLogs.delete(path);
      for (const [path, tail] of this.tails) if (tail.held === held) this.tails.delete(path);
      this.outbox.forget(held.attempt);
      this.sayAliveSoon();
      this.kept?.finished(runKey(name, dagRunId), [...held.runs.values()]);
    }
  }

  /**
   * This worker's folders for a run: a DAG's own log folder outside the server's logs folder is
   * moved under this worker's (`<logs>/.log-dirs/<dag>`), where the worker may write.
   */
  private rootsFor(payload: RunPayload): Roots {
    if (payload.roots.runLogs === undefined) return this.options.roots;
    return { runLogs: join(this.options.roots.logs, OWN_LOG_DIRS, fileSafe(payload.input.record.name)), ...this.options.roots };
  }

  /** Makes the folder of a run's logs, once per folder (this worker's home is emptied at its start, and nothing else removes them). */
  private async logFolder(path: string): Promise<void> {
    if (this.logFolders.has(path)) return;
    await mkdir(path, { recursive: true, mode: 0o700 });
    if (this.logFolders.size >= KEPT_LOG_FOLDERS) this.logFolders.clear();
    this.logFolders.add(path);
  }

  /** The DAG files the run calls, where its engine finds them: a file another run wrote with other text is written anew. */
  private async writeDagFiles(files: Record<string, string>): Promise<void> {
    for (const [fileName, text] of Object.entries(files)) {
      if (dagNameProblem(fileName)) continue;
      const path = join(this.options.roots.dags, `${fileName}.yaml`);
      const current = await readFile(path, 'utf8').catch(() => undefined);
      if (current !== text) await writeFile(path, text, { mode: 0o600 });
    }
  }

  private relayRecord(record: RunRecord, changed: readonly number[]): void {
    const held = this.treeOf(record);
    if (!held) return;
    for (const node of [...record.nodes, ...Object.values(record.handlers ?? {})]) {
      for (const path of [node.stdout, node.stderr]) if (path && !this.tails.has(path)) this.tails.set(path, { held, offset: 0 });
    }
    // A step that ended has its output's last bytes sent ahead of the record that says so, and its files are read no more.
    const ended = new Set<string>();
    for (const index of changed) {
      const node = record.nodes[index];
      if (node && node.status > NodeStatus.Running) for (const path of [node.stdout, node.stderr]) if (path) ended.add(path);
    }
    const sent = { kind: 'record' as const, record: this.toServer(held, record), changed: [...changed] };
    this.inOrder(async () => {
      if (ended.size > 0) await this.readOutputs((path) => ended.has(path), true);
      void this.append(held, sent);
    });
  }

  private relayEnd(end: RunFinishedEvent): void {
    const held = this.runLogs.get(end.log);
    if (!held) return;
    const root = end.name === held.name && end.dagRunId === held.dagRunId;
    this.inOrder(async () => {
      // The output files' last bytes go before the end (a handler's, say, which no node change ended).
      await this.readOutputs((_, tail) => tail.held === held, root);
      const appended = this.append(held, { kind: 'finished', end: this.toServer(held, end) });
      if (root) void appended.then(() => held.endSent());
    });
  }

  private inOrder(step: () => Promise<void> | void): void {
    this.sending = this.sending.then(step).catch((error: unknown) => log.error({ error: errorText(error) }, 'reports of a run could not be sent'));
  }

  /** Appends the report to the stream (its number is taken at the call); resolves once Redis holds it. */
  private append(held: Held, report: Report): Promise<void> {
    const { kind, ...payload } = report;
    return this.outbox.append(held.attempt, kind, payload).then(() => undefined, (error: unknown) => {
      log.error({ dag: held.name, dagRunId: held.dagRunId, error: errorText(error) }, 'a report of the run could not be sent');
    });
  }

  private toServer<T>(held: Held, value: T): T {
    return movePaths(value, held.roots, held.serverRoots);
  }

  /** Sends the bytes written to the output files since the last read (of those `only` picks); `last`: none is read again. */
  private async readOutputs(only: (path: string, tail: Tail) => boolean = () => true, last = false): Promise<void> {
    for (const [path, tail] of this.tails) {
      if (!only(path, tail)) continue;
      if (last) this.tails.delete(path);
      // Most reads find nothing new (a step that printed nothing, or nothing since): a stat tells, where an open would cost three calls on the thread pool.
      const size = statSync(path, { throwIfNoEntry: false })?.size;
      if (size === undefined || size <= tail.offset) continue; // not written yet, or nothing new
      let file;
      try {
        file = await open(path, 'r');
      } catch {
        continue;
      }
      try {
        for (;;) {
          const buffer = Buffer.alloc(OUTPUT_CHUNK);
          const { bytesRead } = await file.read(buffer, 0, OUTPUT_CHUNK, tail.offset);
          if (bytesRead === 0) break;
          void this.append(tail.held, { kind: 'output', path: this.toServer(tail.held, path), offset: tail.offset, data: buffer.subarray(0, bytesRead).toString('base64') });
          tail.offset += bytesRead;
          if (bytesRead < OUTPUT_CHUNK) break;
        }
      } finally {
        await file.close();
      }
    }
  }

  private control(text: string): void {
    let message: StopMessage;
    try {
      message = JSON.parse(text) as StopMessage;
    } catch {
      return;
    }
    if (message.kind !== 'stop') return;
    for (const held of this.held.values()) {
      if (held.attempt === message.attempt) void this.engine?.stop(held.name, held.dagRunId).catch(() => undefined);
    }
  }

  /**
   * A heartbeat within BEAT_SOON_MS, for a run taken or ended (its runs listed as they are): one
   * for all that change meanwhile, not one each (each has the server read the workers' list).
   */
  private sayAliveSoon(): void {
    this.soon ??= setTimeout(() => {
      this.soon = undefined;
      void this.sayAlive();
    }, BEAT_SOON_MS);
  }

  private async sayAlive(): Promise<void> {
    if (this.stopped) return;
    const runningTasks: RunningTask[] = [...this.held.values()].map((held) => ({ dagRunId: held.dagRunId, dagName: held.name, startedAt: held.startedAt }));
    try {
      await heartbeat(this.commands, {
        id: this.options.id, labels: this.options.labels, maxActiveRuns: this.options.maxActiveRuns, runningTasks,
        draining: this.draining, incarnation: this.incarnation,
      });
      await this.commands.publish(HEARTBEAT_CHANNEL, this.options.id);
      await this.stopSettled();
    } catch {
      // Redis is away: the next beat tries again.
    }
  }

  /**
   * Runs the server no longer counts as handed here (it settled them while this worker was cut off
   * from Redis, or slow) are stopped: they must not go on beside the attempt that replaced them.
   */
  private async stopSettled(): Promise<void> {
    const held = [...this.held.values()];
    if (held.length === 0) return;
    const handed = await this.commands.smismember(HANDED_SET, ...held.map((run) => run.attempt));
    held.forEach((run, index) => {
      if (handed[index] === 1 || run.settled) return;
      run.settled = true;
      log.warn({ dag: run.name, dagRunId: run.dagRunId }, 'the server settled this run while this worker was out of its reach: it is stopped here');
      void this.engine?.stop(run.name, run.dagRunId).catch(() => undefined);
    });
  }
}
