// The interfaces the runtime and the HTTP layer depend on; store/ and executors/ implement them.
import type { ContainerSpec, SmtpSpec, SshSpec } from './model.ts';
import type { ListPosition, RunFilter, RunRecord, RunSummaryRow, SummaryPage } from './run.ts';
import type { RunStatus } from './status.ts';
import type { EventBody, EventLog } from './events.ts';
import type { LogFollow, LogFollowOptions } from './log-follow.ts';

/**
 * A run held in memory (`held`: its record, decoded), or only stored: its summary row's node count
 * and status, and `version`, its bytes, which change whenever a write of the run commits.
 */
export type RunLocation = { held: RunRecord } | { stored: { nodeCount: number; status: RunStatus; version: Uint8Array } };

export interface RunStore {
  get(name: string, dagRunId: string): RunRecord | undefined;
  /** get(), a large run decoded a slice of its nodes per turn of the event loop, from one snapshot. */
  read(name: string, dagRunId: string): Promise<RunRecord | undefined>;
  /** Where a run is, its nodes not decoded (RunLocation); undefined when no such run is stored. */
  locate?(name: string, dagRunId: string): RunLocation | undefined;
  latest(name: string): RunRecord | undefined;
  /** Newest first. */
  list(filter: RunFilter): RunRecord[];
  /**
   * Newest first, as summary rows (no nodes): every match, or at most `page.limit` after
   * `page.after` with the position to resume from while more follow.
   */
  summaries(filter: RunFilter, page?: { limit: number; after?: ListPosition }): SummaryPage;
  /**
   * A number that moves whenever a write of a run or a removal commits: while it stands still,
   * every listing of runs answers the same. Undefined while a write is in flight (nothing may be
   * kept then).
   */
  readonly runsGeneration: number | undefined;
  /** The newest run of `name` that is not a sub DAG run, as its summary row. */
  latestSummary(name: string): RunSummaryRow | undefined;
  /** Newest first, at most `limit`. */
  listByName(name: string, limit: number): RunRecord[];
  /**
   * Writes are applied in call order; the promise settles when the write is durable.
   * `changedNodes`: the indexes of the nodes that may differ from the record last saved for this
   * run (the others are the same objects), so a write of a large run costs what changed; without
   * it every node is compared.
   */
  save(record: RunRecord, changedNodes?: Iterable<number>, events?: readonly EventBody[]): Promise<void>;
  /**
   * Makes ready a run's first record before its save, a slice of its nodes per turn of the event
   * loop: encoded, and for a run not stored yet its nodes written, invisible until the save writes
   * its summary (a run of 10,000 steps held the event loop while they were encoded and issued).
   * Rejects when those writes fail. A save of a record not prepared does all of it itself.
   */
  prepareFirstSave(record: RunRecord): Promise<void>;
  /** What happened, numbered: each event commits with the record (or flag) it describes. */
  readonly events: EventLog;
  /** Events that describe no run record (a DAG file changed, a queue's limit changed). */
  appendEvents(events: readonly EventBody[]): Promise<void>;
  saveSpec(name: string, dagRunId: string, spec: string): Promise<void>;
  getSpec(name: string, dagRunId: string): string | undefined;
  isSuspended(fileName: string): boolean;
  setSuspended(fileName: string, suspended: boolean, events?: readonly EventBody[]): Promise<void>;
  /** Writes and reads a probe record; rejects when the store is unusable. */
  check(): Promise<void>;
  close(): Promise<void>;
}

/** A run waiting in a queue. */
export interface QueueItem {
  queue: string;
  /** The run: its DAG name and id. Its definition is the run's stored spec (RunStore.getSpec). */
  name: string;
  dagRunId: string;
  /** First in, first out within a queue: every enqueue takes a higher number, across restarts too. */
  seq: number;
  enqueuedAtMs: number;
  /** As the request gave them: they are evaluated (backtick commands run) when the run starts. */
  params?: string;
  /** The stored DAG the run came from; absent for an inline spec. */
  fileName?: string;
}

export interface QueueSummary {
  queue: string;
  queued: number;
  oldestEnqueuedAtMs: number;
}

/**
 * Queue items, each written in one transaction with its run's record: a run is never queued
 * without its item, nor the reverse. Reads are synchronous: an enqueued item shows once its write
 * is durable, a dispatched or dequeued one leaves them at the call.
 */
export interface QueueStore {
  /**
   * Stores `record` (status queued, `queuedAt` set, its nodes not started), its spec and its item
   * at the tail of `queue`. Rejects bad_request on a name or a record that cannot be queued, and
   * already_exists when a run of that name and id is stored.
   */
  enqueue(record: RunRecord, request: { queue: string; spec: string; params?: string; fileName?: string }, events?: readonly EventBody[]): Promise<QueueItem>;
  /**
   * A queued run starts: its first record (running; it keeps the `createdAtMs` and `queuedAt` of
   * its queued record) is stored and its item removed, in one transaction. Decided at the call:
   * the item leaves the reads at once. Rejects not_found when the run is no longer queued
   * (dequeued, or dispatched by an earlier call).
   */
  dispatch(record: RunRecord, events?: readonly EventBody[]): Promise<QueueItem>;
  /**
   * A queued run leaves its queue without running: its final record (aborted when dequeued,
   * failed when it could not start) is stored and its item removed. Rejects not_found as dispatch.
   */
  dequeue(record: RunRecord, events?: readonly EventBody[]): Promise<QueueItem>;
  /** First in, first out. */
  items(queue: string): QueueItem[];
  head(queue: string): QueueItem | undefined;
  find(name: string, dagRunId: string): QueueItem | undefined;
  /** The queues that hold items, by name. */
  queues(): QueueSummary[];
  /** Items in `queue`, or in all queues. */
  size(queue?: string): number;
  /** How long the oldest item of `queue` has waited at `nowMs`; undefined when it is empty. */
  oldestAgeMs(queue: string, nowMs: number): number | undefined;
}

export interface DagFile {
  fileName: string;
  text: string;
  path: string;
}

export interface DagStore {
  readonly dir: string;
  list(): Promise<DagFile[]>;
  /** The DAG files' names alone, sorted; no file is read. */
  fileNames(): Promise<string[]>;
  read(fileName: string): Promise<DagFile | undefined>;
  /** For validation, which must answer at once (the DAG files a definition calls). */
  readSync(fileName: string): DagFile | undefined;
  /**
   * `create` fails with already_exists when the file is there, `replace` with not_found when it is
   * not. Writes, renames and removals of one file are applied one at a time, in call order.
   */
  write(fileName: string, text: string, mode: 'create' | 'replace'): Promise<void>;
  remove(fileName: string): Promise<boolean>;
  rename(from: string, to: string): Promise<void>;
  exists(fileName: string): Promise<boolean>;
  /** For validation, which must answer at once (a `call` names a DAG file). */
  existsSync(fileName: string): boolean;
  /** The DAG files' names (sorted), each with the path readSync reads it from; no file is read nor stat'ed. */
  paths(): Promise<Map<string, string>>;
  /**
   * What identifies the content at `path` (inode, size, times) without reading it, undefined when no
   * file is there: a listing parses again only the files whose stamp moved.
   */
  stamp(path: string): string | undefined;
  /** What identifies the directory's list of entries (its inode and times); undefined when it is gone. */
  directoryStamp(): string | undefined;
  /** `listener` is told the name of each file written, renamed (both names) or removed through this store, before the next change of it begins. */
  onWrite(listener: (fileName: string) => void): void;
  /** Resolves once every write, rename and removal of the file issued through this store so far is applied, and its listeners told. */
  settled(fileName: string): Promise<void>;
}

/** The most lines one log request returns (docs/api.md). */
export const MAX_LOG_LINES = 10_000;

export interface LogQuery {
  tail?: number;
  head?: number;
  /** 1-based line. */
  offset?: number;
  limit?: number;
  /** The whole lines that start at or after this byte of the file; wins over tail, head and offset. */
  byteOffset?: number;
  /**
   * Whether the file will not grow (its step or run has ended; default true). Until then a last
   * line without its newline may be half written: nextOffset stays before it, and a byteOffset
   * read leaves it out.
   */
  ended?: boolean;
}

export interface LogChunk {
  content: string;
  lineCount: number;
  totalLines: number;
  hasMore: boolean;
  isEstimate: boolean;
  /** The byte of the file just after the last whole line returned: where a follower reads next. */
  nextOffset: number;
}

export interface StepLogPaths {
  stdout: string;
  stderr: string;
  /** Where a multi-line command or script is written before it runs. */
  script: string;
}

export interface LogStore {
  /** `logDir`: the DAG's own log directory, when its definition sets one. */
  dagDir(name: string, logDir?: string): string;
  runLogPath(name: string, dagRunId: string, attemptId: string, logDir?: string): string;
  stepPaths(name: string, dagRunId: string, attemptId: string, index: number, stepName: string, logDir?: string): StepLogPaths;
  /** Makes sure the DAG's log folder exists before a run writes there; throws when it cannot. */
  prepare(name: string, logDir?: string): void;
  /** Appends lines in call order. */
  appendRunLog(path: string, line: string): void;
  closeRunLog(path: string): Promise<void>;
  read(path: string, query: LogQuery): Promise<LogChunk | undefined>;
  /** Follows a log file from a byte on, as it is written: it need not exist yet (log-follow.ts). */
  follow(path: string, options: LogFollowOptions): LogFollow;
}

export interface StepTask {
  executor: { type: string; config: Record<string, unknown> };
  /** Absent when the definition sets none: `sh`, and a script's shebang is honoured. */
  shell?: string[];
  command?: string;
  /** Command lines, each run by the shell as its own process, in order, until one fails. */
  commands?: string[];
  script?: string;
  scriptPath: string;
  env: Record<string, string>;
  workingDir: string;
  /** Log files of the step's output; absent for a substitution, whose output is only captured. */
  stdoutPath?: string;
  stderrPath?: string;
  /** Files the definition sends the step's output to as well (its `stdout`/`stderr` fields). */
  stdoutCopy?: string;
  stderrCopy?: string;
  captureOutput: boolean;
  maxOutputSize: number;
  /** Values to mask as ******* in logs and captured output. */
  secrets: string[];
  /** What the DAG's root fields give the step's executor; absent when the DAG sets none of them. */
  services?: StepServices;
}

/**
 * The DAG-level settings a step's executor may need (definition format: root fields), with their
 * variables expanded when the run starts.
 */
export interface StepServices {
  /** The DAG-level container: steps run in it by exec; `name` is the container's, one per run. */
  container?: { spec: ContainerSpec; name: string };
  /** The DAG-level ssh settings; a step's own ssh config replaces them whole. */
  ssh?: SshSpec;
  smtp?: SmtpSpec;
  /** Credentials for pulling images, by registry host. */
  registryAuths?: Record<string, { username?: string; password?: string }>;
}

export type StepResult =
  /** `partial`: a sub DAG call whose child run partially succeeded (node status 6). `timedOut`: the step's own timeoutSec ended it. */
  | { kind: 'ok'; exitCode: number; signal?: string; output?: string; error?: string; partial?: boolean; timedOut?: boolean }
  | { kind: 'error'; code: string; message: string }
  /** A precondition did not hold: the step did not run (the engine's verdict, never an executor's). */
  | { kind: 'skipped'; message: string };

export interface StepHandle {
  readonly result: Promise<StepResult>;
  /** Sends `signal` to the step's process group, then SIGKILL after `cleanupMs`. */
  stop(signal: string, cleanupMs: number): void;
}

export interface StepDispatcher {
  dispatch(task: StepTask): StepHandle;
  close(): Promise<void>;
}

/** A scheduled tick that fell while the server was not running: listed for the operator, not run. */
export interface MissedTick {
  kind: 'start' | 'stop' | 'restart';
  /** When it should have ticked (ISO 8601). */
  scheduledAt: string;
  /** The expression that ticks, as written (with its `CRON_TZ=` prefix). */
  expression: string;
  /** When the server, starting again, found it missed (ISO 8601). */
  noticedAt: string;
}

/** What the cron scheduler keeps across restarts to tell the ticks missed while it was down. */
export interface CronState {
  /** Every tick up to this instant (ms) was acted on. */
  handedUpTo: number;
  /** The schedule each scheduled DAG file had then: a DAG whose schedule changed meanwhile missed nothing. */
  schedules: Record<string, string>;
  /** The ticks missed, by DAG file name, oldest first. */
  missed: Record<string, MissedTick[]>;
  /** Ticks handed out but not yet acted on (a restart waiting `restartWaitSec`): missed if the server stops first. */
  unfinished: Array<{ fileName: string; kind: MissedTick['kind']; at: number; expression: string }>;
}

export interface CronStateStore {
  /** Undefined on the first start (or when what was stored cannot be read). */
  read(): Promise<CronState | undefined>;
  /** Replaces what is stored; writes are applied in call order and a reader never sees half of one. */
  write(state: CronState): Promise<void>;
}
