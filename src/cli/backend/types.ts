// What a verb asks of troupe, whether a server answers it over HTTP or the engine runs embedded in
// this process: the same calls, the same runs in the same store, shown in the API's shapes.
import type { LogChunk } from '../../core/index.ts';

/** A node as the API shows it in run details. */
export interface NodeView {
  step: { name: string };
  status: number;
  statusLabel: string;
  startedAt: string;
  finishedAt: string;
  error: string;
  stdout: string;
  stderr: string;
}

/** A run as the API's run details show it (the fields the command uses). */
export interface RunView {
  name: string;
  dagRunId: string;
  status: number;
  statusLabel: string;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
  log: string;
  params: string;
  /** The worker that runs or ran it (distributed dispatch); absent when a server ran it itself. */
  workerId?: string;
  nodes: NodeView[];
  /**
   * Embedded only: recorded running, but no process runs it (the server that ran it stopped
   * without ending it). The next server or scheduler on the home resumes or settles it.
   */
  interrupted?: true;
}

/** A stored DAG by its name, or a YAML file run as an inline spec (a path, as Dagu takes). */
export type DagRef = { kind: 'stored'; fileName: string } | { kind: 'file'; path: string; spec: string; name: string };

export interface RunOptions {
  params?: string;
  dagRunId?: string;
  dagName?: string;
  queue?: string;
}

/** What `POST /dag-runs/cleanup` answers: the root runs that went (or, dry, would go), and how many runs went in all. */
export interface CleanupView {
  dryRun: boolean;
  dagRuns: Array<{ name: string; dagRunId: string }>;
  removed: number;
}

/** The lines of a log read in one request, as the API's log routes allow at most (MAX_LOG_LINES). */
export const LOG_PAGE_LINES = 10_000;

/** Lines of a log, as the API's log routes answer them. */
export type LogPage = Pick<LogChunk, 'content' | 'lineCount' | 'hasMore' | 'totalLines' | 'isEstimate' | 'nextOffset'>;

/** The whole lines from a byte of the log on (LOG_PAGE_LINES at most), or its last line as it stands. */
export type LogPageQuery = { byteOffset: number } | { tail: 1 };

/** A step's end, as the end of its log tells it: the node's status and the byte after its log's last line. */
export interface StepLogEnd {
  status: number;
  statusLabel: string;
  nextOffset: number;
}

export interface FollowLogOptions {
  /** The byte of the log to start from (0, the default: its beginning). */
  from?: number;
  /** Stops following; the promise then rejects. */
  signal?: AbortSignal;
  /** The line begun and not ended yet, as written so far, each time it grows (a prompt); it still comes to `onLine` whole once it ends. */
  onPartial?: (text: string) => void;
}

export interface Backend {
  /** `server` (HTTP, `url` set) or `embedded` (this process holds the home). */
  readonly kind: 'server' | 'embedded';
  readonly url?: string;
  start(dag: DagRef, options: RunOptions): Promise<{ dagRunId: string }>;
  enqueue(dag: DagRef, options: RunOptions): Promise<{ dagRunId: string }>;
  /** A one-off inline spec (`exec`). */
  startSpec(spec: string, options: RunOptions & { name: string }): Promise<{ dagRunId: string }>;
  dequeue(name: string, dagRunId: string): Promise<void>;
  /** Run details; `latest` names the newest run of the DAG. */
  run(name: string, dagRunId: string): Promise<RunView>;
  /** The runs of a DAG name (or of every DAG), newest first, sub DAG runs left out; `status`: of that status only. */
  runs(name?: string, filter?: { status?: number; limit?: number }): Promise<RunView[]>;
  stop(name: string, dagRunId: string): Promise<void>;
  retry(name: string, dagRunId: string, options: { stepName?: string }): Promise<void>;
  reschedule(name: string, dagRunId: string, options: { dagRunId?: string }): Promise<{ dagRunId: string; queued: boolean }>;
  /** Lines a step of the run wrote to stdout or stderr, as the step log endpoint reads them (none before it wrote). */
  stepLogPage(name: string, dagRunId: string, stepName: string, stream: 'stdout' | 'stderr', query: LogPageQuery): Promise<LogPage>;
  /**
   * Follows a step's stdout or stderr: `onLine` is called with each line as it is written, until
   * the step has ended and its log was read to its end (a run that ended, or that nothing runs,
   * ends it too). Over HTTP through the log stream route; embedded, from the file.
   */
  followStepLog(name: string, dagRunId: string, stepName: string, stream: 'stdout' | 'stderr', onLine: (line: string) => void, options?: FollowLogOptions): Promise<StepLogEnd>;
  /** A DAG's finished runs older than `retentionDays` (0: all) removed, with their logs; `dryRun`: only listed. */
  cleanup(name: string, options: { retentionDays: number; dryRun: boolean }): Promise<CleanupView>;
  /**
   * Calls `onChange` with the run's details each time they change, until it ends; resolves with
   * its final details. `previousEnd`: the finish time of an attempt before this one (a retry), not
   * taken for this one's end.
   */
  watch(name: string, dagRunId: string, onChange: (run: RunView) => void, options?: { previousEnd?: string }): Promise<RunView>;
  close(): Promise<void>;
}
