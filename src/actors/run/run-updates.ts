// Pure updates of a run's record: what each transition changes and the run-log line it writes.
import { HANDLER_NODE_NAMES, NodeStatus, isoTime, setOwn, nodeStatusLabel, nodeSucceeded, runStatusLabel, type HandlerKind, type NodeRecord, type RunRecord, type RunStatus, type StepResult } from '../../core/index.ts';
import type { StepFinishedEvent, StepRerunEvent, StepSubRunEvent } from '../step/step.machine.ts';
import { logLine } from './log-line.ts';
import type { RunPlan } from './plan.ts';
import { failureContinues } from './continue-on.ts';
import { recordFinished, takeBlocked, takeReady, type Schedule } from './schedule.ts';

export interface RunState {
  record: RunRecord;
  plan: RunPlan;
  /** A DAG-level precondition that did not hold. */
  unmet?: string;
  outputs: Record<string, string>;
  stopRequested: boolean;
  /**
   * Which steps can start: changed in place by startSteps and finishStep (schedule.ts). Its
   * outcomes also tell the steps whose failure or skip their continueOn let through.
   */
  schedule: Schedule;
  /** The DAG's timeoutSec expired: its running steps were stopped and the run fails. */
  timedOut: boolean;
  /** delaySec has passed: the first steps start after it. */
  delayed: boolean;
  /** The init handler failed: no step runs and the run is aborted. */
  initFailed: boolean;
  /** How the run ends, decided when its steps have settled (handlers may turn it to failed). */
  outcome?: RunStatus;
}

const runFields = (record: RunRecord) => ({ dag: record.name, 'run-id': record.dagRunId, 'attempt-id': record.attemptId });

/**
 * Marks steps that can never run as aborted (or skipped), then the ready ones as running. Takes
 * them from the schedule; the record is the same object when nothing changed.
 */
export function startSteps(state: RunState, at: number): { record: RunRecord; started: number[]; changed: number[]; lines: string[] } {
  const { plan, schedule } = state;
  const blocked = takeBlocked(schedule, plan.steps, (index) => state.record.nodes[index].status);
  const started = takeReady(schedule, plan.maxActiveSteps);
  if (blocked.length === 0 && started.length === 0) return { record: state.record, started, changed: [], lines: [] };
  const nodes = state.record.nodes.slice();
  for (const { index, culprit, status } of blocked) {
    const upstream = plan.steps[culprit].name;
    const error = status === NodeStatus.Skipped ? `upstream step "${upstream}" was skipped` : `upstream step "${upstream}" did not succeed`;
    nodes[index] = { ...nodes[index], status, error };
  }
  for (const index of started) nodes[index] = { ...nodes[index], status: NodeStatus.Running, startedAt: isoTime(at) };
  const record = { ...state.record, nodes };
  const lines = started.map((index) => logLine(at, 'INFO', 'Step started', { ...runFields(record), step: plan.steps[index].name }));
  return { record, started, changed: [...blocked.map(({ index }) => index), ...started], lines };
}

/** A step's result; it settles in the schedule (changed in place). */
export function finishStep(state: RunState, event: StepFinishedEvent): { record: RunRecord; outputs: Record<string, string>; line: string } {
  const { index, result, at } = event;
  const step = state.plan.steps[index];
  const updated = nodeAfter(state.record.nodes[index], result, at, state.stopRequested);
  const outputs = { ...state.outputs };
  const continues = (updated.status === NodeStatus.Skipped && step.continueOn?.skipped === true) ||
    (updated.status === NodeStatus.Failed && failureContinues(step.continueOn, result));
  if (continues && updated.status === NodeStatus.Failed && step.continueOn?.markSuccess) updated.status = NodeStatus.Succeeded;
  // A failed step's error names it, as Dagu's runner wraps it; a step's own timeout, a stop and a
  // failure markSuccess turned into a success keep the executor's error as it is (as in Dagu).
  if (updated.status === NodeStatus.Failed && updated.error && !(result.kind === 'ok' && result.timedOut)) updated.error = failedStepError(step.name, updated.error);
  // A step that ran to an end stores its output, a failure too: handlers and the steps its
  // continueOn lets go may test it. A skipped step stores nothing.
  let kept: Partial<RunRecord> = {};
  if (step.output && result.kind === 'ok' && result.output !== undefined && (nodeSucceeded(updated.status) || updated.status === NodeStatus.Failed)) {
    setOwn(outputs, step.output, result.output);
    // The executor masked secrets already; the later step in execution order wins.
    const document = step.outputKey !== undefined ? { ...state.record.outputs, [step.outputKey]: result.output } : state.record.outputs;
    kept = { outputVars: outputs, ...(document ? { outputs: document } : {}) };
  }
  const nodes = state.record.nodes.slice();
  nodes[index] = updated;
  recordFinished(state.schedule, nodes, index, nodeSucceeded(updated.status) || continues);
  const record = { ...state.record, nodes, ...kept };
  const line = logLine(at, nodeSucceeded(updated.status) ? 'INFO' : 'ERROR', 'Step finished', {
    ...runFields(record), step: step.name, status: nodeStatusLabel(updated.status), ...(updated.error ? { error: updated.error } : {}),
  });
  return { record, outputs, line };
}

/** A failed step's error, in the form of Dagu's runner: `failed to execute step "build": exit status 2`. */
export function failedStepError(step: string, error: string): string {
  return `failed to execute step ${JSON.stringify(step)}: ${error}`;
}

/** A node after its execution's result: failures of a stopped run are aborts. */
function nodeAfter(node: NodeRecord, result: StepResult, at: number, stopped: boolean): NodeRecord {
  const updated: NodeRecord = { ...node, finishedAt: isoTime(at) };
  const failed = stopped ? NodeStatus.Aborted : NodeStatus.Failed;
  if (result.kind === 'skipped') {
    updated.status = NodeStatus.Skipped;
    updated.error = result.message;
  } else if (result.kind === 'error') {
    updated.status = failed;
    updated.error = result.message;
  } else {
    updated.exitCode = result.exitCode;
    updated.error = result.error ?? '';
    const succeeded = result.partial ? NodeStatus.PartiallySucceeded : NodeStatus.Succeeded;
    updated.status = result.exitCode === 0 && !result.error ? succeeded : failed;
  }
  // An execution that reached an end counts; a skip, or one cut off by a stop or the DAG's timeout
  // (aborted), does not. A step's own timeout is a failure, and counts.
  if (nodeSucceeded(updated.status) || updated.status === NodeStatus.Failed) updated.doneCount = node.doneCount + 1;
  return updated;
}

export function startHandler(state: RunState, kind: HandlerKind, at: number): { record: RunRecord; line: string } {
  const name = HANDLER_NODE_NAMES[kind];
  const node = { ...state.record.handlers![name]!, status: NodeStatus.Running, startedAt: isoTime(at) };
  const record = { ...state.record, handlers: { ...state.record.handlers, [name]: node } };
  return { record, line: logLine(at, 'INFO', 'Handler started', { ...runFields(record), handler: name }) };
}

/** A handler's result; `failed` when it did not succeed. Its output is not collected (docs/api.md, Handlers). */
export function finishHandler(state: RunState, kind: HandlerKind, result: StepResult, at: number): { record: RunRecord; failed: boolean; line: string } {
  const name = HANDLER_NODE_NAMES[kind];
  const before = state.record.handlers![name]!;
  // A handler's executions are not counted: its doneCount stays 0, as in Dagu's run details.
  const node = { ...nodeAfter(before, result, at, false), doneCount: before.doneCount };
  const record = { ...state.record, handlers: { ...state.record.handlers, [name]: node } };
  // A handler skipped by its preconditions changes nothing (docs/api.md, Handlers).
  const failed = !nodeSucceeded(node.status) && node.status !== NodeStatus.Skipped;
  const line = logLine(at, failed ? 'ERROR' : 'INFO', 'Handler finished', {
    ...runFields(record), handler: name, status: nodeStatusLabel(node.status), ...(node.error ? { error: node.error } : {}),
  });
  return { record, failed, line };
}

/** A step (or handler) started a sub DAG run: it joins the node's subRuns once (a retry runs the same child again). */
export function addSubRun(state: RunState, event: StepSubRunEvent): RunRecord {
  const name = event.handler && HANDLER_NODE_NAMES[event.handler];
  const node = name ? state.record.handlers![name]! : state.record.nodes[event.index];
  if (node.subRuns.some((sub) => sub.dagRunId === event.dagRunId)) return state.record;
  const updated = { ...node, subRuns: [...node.subRuns, { dagRunId: event.dagRunId, params: event.params }] };
  const children = { ...state.record.children, [event.dagRunId]: event.dagName };
  return { ...withNode(state.record, event, updated), children };
}

/** The record with the node of a step (or of a handler) replaced. */
function withNode(record: RunRecord, event: { index: number; handler?: HandlerKind }, node: NodeRecord): RunRecord {
  if (event.handler) return { ...record, handlers: { ...record.handlers, [HANDLER_NODE_NAMES[event.handler]]: node } };
  const nodes = record.nodes.slice();
  nodes[event.index] = node;
  return { ...record, nodes };
}

/** A retry starts (retryCount) or a repeat's execution ended (doneCount); the node stays running. */
export function rerunStep(state: RunState, event: StepRerunEvent): { record: RunRecord; line: string } {
  const node = event.handler ? state.record.handlers![HANDLER_NODE_NAMES[event.handler]]! : state.record.nodes[event.index];
  // A repeated execution's sub DAG runs move to subRunsRepeated; the next one's fill subRuns.
  const updated: NodeRecord = event.kind === 'retry'
    ? { ...node, retryCount: event.count, error: resultError(event.result) }
    : { ...node, doneCount: event.handler ? node.doneCount : event.count, subRuns: [], subRunsRepeated: [...node.subRunsRepeated, ...node.subRuns] };
  const record = withNode(state.record, event, updated);
  const step = event.handler ? HANDLER_NODE_NAMES[event.handler] : state.plan.steps[event.index].name;
  const line = event.kind === 'retry'
    // The node keeps the executor's error between retries; the line names the step, as Dagu's does.
    ? logLine(event.at, 'WARN', 'Step retrying', { ...runFields(record), step, attempt: String(event.count), error: updated.error && failedStepError(step, updated.error) })
    : logLine(event.at, 'INFO', 'Step repeating', { ...runFields(record), step, executions: String(event.count) });
  return { record, line };
}

function resultError(result: StepResult): string {
  if (result.kind === 'ok') return result.error ?? '';
  return result.message;
}

export function endRun(state: RunState, status: RunStatus, at: number): { record: RunRecord; line: string } {
  const record: RunRecord = { ...state.record, status, finishedAt: isoTime(at) };
  const line = logLine(at, 'INFO', 'DAG run finished', {
    ...runFields(record), status: runStatusLabel(status), 'started-at': record.startedAt, 'finished-at': record.finishedAt,
  });
  return { record, line };
}

/** The run log's first lines: the start, and the worker it runs on, or a `workerSelector` that chose nothing (no worker runs runs for this server, or it is a sub DAG run's). */
export function runStartedLines(record: RunRecord, plan: Pick<RunPlan, 'workerSelector' | 'worker'>, at: number): string[] {
  const started = logLine(at, 'INFO', 'DAG run started', { ...runFields(record), params: record.params });
  if (plan.worker !== undefined) return [started, logLine(at, 'INFO', 'DAG run placed on a worker', { ...runFields(record), worker: plan.worker })];
  if (!plan.workerSelector) return [started];
  const labels = Object.entries(plan.workerSelector).map(([key, value]) => `${key}=${value}`).join(',');
  const why = record.parentDAGRunId !== ''
    ? 'workerSelector ignored: a sub DAG run runs where its caller runs (a call step\'s own workerSelector places it)'
    : 'workerSelector ignored: this server runs the DAG run itself, on no worker';
  return [started, logLine(at, 'WARN', why, { ...runFields(record), 'worker-selector': labels })];
}
