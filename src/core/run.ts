// The persisted record of a DAG run. Times are ISO strings, '' while they do not apply.
import type { NodeStatus, RunStatus } from './status.ts';

/** The step object shown inside a node (as the API shows it). */
export interface StepView {
  name: string;
  id?: string;
  description?: string;
  dir?: string;
  command?: string;
  args?: string[];
  commands?: Array<{ command: string; args: string[] }>;
  script?: string;
  depends?: string[];
  output?: string;
  /** The sub DAG, under the spec's name (`run`) and Dagu 1.30's (`call`). */
  run?: string;
  call?: string;
  /** Sub DAG parameters as text (a map is shown as JSON). */
  params?: string;
  parallel?: { items: unknown[] | string; maxConcurrent?: number };
  stdout?: string;
  stderr?: string;
  mailOnError?: boolean;
  timeoutSec?: number;
  preconditions?: ConditionView[];
  repeatPolicy?: RepeatPolicyView;
  executorConfig: { type?: string; config: Record<string, unknown> };
}

/** A condition as the API shows it (Dagu's Condition): a command-form condition is its `condition`. */
export interface ConditionView {
  condition: string;
  expected?: string;
  negate?: boolean;
  error?: string;
}

export interface RepeatPolicyView {
  repeat: 'while' | 'until';
  interval: number;
  limit?: number;
  backoff?: number;
  maxIntervalSec?: number;
  condition?: { condition: string; expected?: string };
  exitCode?: number[];
}

export interface NodeRecord {
  step: StepView;
  stdout: string;
  stderr: string;
  startedAt: string;
  finishedAt: string;
  status: NodeStatus;
  retryCount: number;
  doneCount: number;
  error: string;
  exitCode?: number;
  subRuns: Array<{ dagRunId: string; params: string }>;
  subRunsRepeated: Array<{ dagRunId: string; params: string }>;
}

/** Handler nodes as run details name them (docs/api.md). */
export type HandlerNodeName = 'onInit' | 'onSuccess' | 'onFailure' | 'onCancel' | 'onExit';

/** The handler kinds of the definition (`abort` is the canonical name of `cancel`). */
export type HandlerKind = 'init' | 'success' | 'failure' | 'abort' | 'exit';

export const HANDLER_NODE_NAMES: Record<HandlerKind, HandlerNodeName> = {
  init: 'onInit', success: 'onSuccess', failure: 'onFailure', abort: 'onCancel', exit: 'onExit',
};

export interface RunRecord {
  name: string;
  dagRunId: string;
  attemptId: string;
  rootDAGRunName: string;
  rootDAGRunId: string;
  parentDAGRunName: string;
  parentDAGRunId: string;
  status: RunStatus;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
  log: string;
  /** JSON object text: named parameters by name, positional ones under "1", "2"... */
  params: string;
  nodes: NodeRecord[];
  /** File name of the stored DAG the run came from; absent for inline specs. */
  fileName?: string;
  error?: string;
  /**
   * The outputs document (definition format: the outputs document): output key -> trimmed stdout, secrets already masked,
   * the later step winning; absent until a step with an output finishes.
   */
  outputs?: Record<string, string>;
  /** The sub DAG runs this run started: their ids -> DAG names (the API addresses them by id). */
  children?: Record<string, string>;
  /** Outputs by variable name (masked), for the steps a retry runs again; not shown by the API. */
  outputVars?: Record<string, string>;
  /** Nodes of the lifecycle handlers the definition has, by their API names. */
  handlers?: Partial<Record<HandlerNodeName, NodeRecord>>;
  /** Milliseconds since the epoch at creation: the order of listings. */
  createdAtMs: number;
  /** The worker that runs it (distributed dispatch); absent when this server runs it. */
  workerId?: string;
  /** A queued run's: the W3C traceparent of the span its start request came from. */
  traceParent?: string;
}

/** A run without its nodes: what a listing shows and filters on. */
export type RunSummaryRow = Omit<RunRecord, 'nodes'>;

/** Where a listing stands: the last run it returned, in the newest-first order of every listing. */
export interface ListPosition {
  createdAtMs: number;
  name: string;
  dagRunId: string;
}

export interface SummaryPage {
  runs: RunSummaryRow[];
  /** The last run of this page when more matches follow it; absent at the end. */
  next?: ListPosition;
}

export interface RunFilter {
  /** Sub DAG runs are left out of listings unless asked for. */
  includeSubRuns?: boolean;
  name?: string;
  status?: RunStatus;
  /** Unix milliseconds, inclusive. */
  fromMs?: number;
  toMs?: number;
  dagRunId?: string;
}

const HANDLER_NODE_NAME_SET: ReadonlySet<string> = new Set(Object.values(HANDLER_NODE_NAMES));

export function isHandlerNodeName(name: string): name is HandlerNodeName {
  return HANDLER_NODE_NAME_SET.has(name);
}

/** The step's node in `record`, a lifecycle handler's found by its node name too (onInit, onExit...). */
export function stepNodeOf(record: RunRecord, stepName: string): NodeRecord | undefined {
  return record.nodes.find((node) => node.step.name === stepName)
    ?? (isHandlerNodeName(stepName) ? record.handlers?.[stepName] : undefined);
}

/**
 * The sub DAG runs `root` reaches through `children`, at any depth, that belong to it (their root
 * is it), in the order found: each run before the runs it started.
 */
export function subRunsUnder(root: RunRecord, lookup: (name: string, dagRunId: string) => RunRecord | undefined): RunRecord[] {
  const tree = [root];
  const seen = new Set([`${root.name}\u0000${root.dagRunId}`]);
  for (let index = 0; index < tree.length; index++) {
    for (const [dagRunId, name] of Object.entries(tree[index].children ?? {})) {
      const key = `${name}\u0000${dagRunId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const child = lookup(name, dagRunId);
      if (child && child.rootDAGRunName === root.name && child.rootDAGRunId === root.dagRunId) tree.push(child);
    }
  }
  return tree.slice(1);
}
