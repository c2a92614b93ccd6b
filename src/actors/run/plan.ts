// A run's plan: the DAG resolved for one run (params, env, log paths), as plain data for the actor.
import { join, resolve } from 'node:path';
import { HANDLER_NODE_NAMES, eachInTurns, isNixShell, mapInTurns, ownValue, type Condition, type ContinueOn, type Dag, type HandlerKind, type LogStore, type NodeRecord, type ParamDef, type RepeatPolicy, type RetryPolicy, type Step, type StepLogPaths, type StepServices, type StepTask } from '../../core/index.ts';
import type { MailSpec, RunTrace } from '../../core/index.ts';
import { evaluateEnv, expandVariables, expandedDir, isExpandedDir, nixShellWords, paramsRecord, splitWords, type ExpandScope } from '../../definition/index.ts';
import { evaluateEnvWithCommands, type RunCommand } from './substitution.ts';
import { DEFAULT_SHELL, ShellReferences } from './shell-references.ts';
import { shebangOf } from './shell-syntax.ts';
import { runTrace, type TraceChoice } from './trace-plan.ts';

/** The interpreter of a step that no shell runs: its references are expanded to their values. */
const NO_SHELL: readonly string[] = [];
const EXECUTORS_WITHOUT_SHELL = new Set(['jq', 'http', 'archive']);

export interface PlannedStep {
  name: string;
  /** For ${id.exitCode}, ${id.stdout} and ${id.stderr} in later steps. */
  id?: string;
  depends: number[];
  command?: string;
  commands?: string[];
  script?: string;
  shell?: string[];
  /** Its working directory; as written when it names variables or ~ (`dirBase` is then set). */
  dir: string;
  /** The DAG's working directory, which a `dir` expanded as the step starts is resolved against. */
  dirBase?: string;
  env: Array<[string, string]>;
  output?: string;
  /** The output's key in the outputs document; absent when `omit` keeps it out. */
  outputKey?: string;
  preconditions: Condition[];
  continueOn?: ContinueOn;
  /** The step's own deadline; the step fails when it passes. */
  timeoutSec?: number;
  retryPolicy?: RetryPolicy;
  repeatPolicy?: RepeatPolicy;
  /** A sub DAG run (`call`, or the dag executor's command), its params and fan-out. */
  call?: {
    target: string; params?: string | Record<string, string>; parallel?: { items: unknown[] | string; maxConcurrent?: number };
    /** The labels of the worker its sub DAG runs go to (distributed dispatch); absent: where this run runs. */
    workerSelector?: Record<string, string>;
  };
  signalOnStop: string;
  executor: { type: string; config: Record<string, unknown> };
  stdout: string;
  stderr: string;
  scriptPath: string;
  /** The definition's `stdout`/`stderr` files. */
  stdoutCopy?: string;
  stderrCopy?: string;
  /** Mail the DAG's errorMail when the step fails (`mailOnError`). */
  mailOnError?: boolean;
}

/** The run's notification mail (definition format: root fields): when it goes and to whom. */
export interface RunMailPlan {
  mailOn: { failure: boolean; success: boolean };
  errorMail?: MailSpec;
  infoMail?: MailSpec;
}

export interface RunPlan {
  name: string;
  dagRunId: string;
  /** The root run of a tree of sub DAG runs (this run when it has no parent). */
  root: { name: string; dagRunId: string };
  /** The DAG names of the runs above this one, the root first: how deep its sub DAG runs nest. */
  callers: readonly string[];
  /** The definition's text: sub DAG runs find the local DAGs of the file in it. */
  specText: string;
  attemptId: string;
  logPath: string;
  maxActiveSteps: number;
  maxCleanUpTimeSec: number;
  /** The run's deadline from its start; 0: none. */
  timeoutSec: number;
  /** The wait before the first step; 0: none. */
  delaySec: number;
  maxOutputSize: number;
  /** Variables every step sees: the filtered system env, built-ins, params and the DAG's env. */
  baseEnv: Record<string, string>;
  /** Positional parameters ("1", "2"...): referenced as $1 but not exported. */
  positional: Record<string, string>;
  /** Values to mask in logs and captured output. */
  secrets: string[];
  steps: PlannedStep[];
  /** The lifecycle handlers the definition has (`handlerOn`: init, success, failure, abort, exit). */
  handlers: Partial<Record<HandlerKind, PlannedStep>>;
  /** The DAG-level container, ssh, smtp and registry settings, expanded; absent when it has none. */
  services?: StepServices;
  /** Absent when the DAG sends no mail. */
  mail?: RunMailPlan;
  /**
   * The DAG's `workerSelector`, when it names labels: this server runs every run itself, so the
   * labels choose nothing, and the run log says so (as Dagu does without its coordinator).
   */
  workerSelector?: Record<string, string>;
  /** The worker the run was placed on (distributed dispatch), in place of the selector it met. */
  worker?: string;
  /** Absent when the run is not traced (no `otel` enabled for it). */
  trace?: RunTrace;
}

export interface PlanInput {
  dag: Dag;
  name: string;
  dagRunId: string;
  attemptId: string;
  params: ParamDef[];
  systemEnv: Record<string, string>;
  logs: LogStore;
  /** From dotenv files and secret providers, read when the run starts. */
  variables?: { dotenv: Record<string, string>; secrets: Record<string, string> };
  /** The DAG's env already evaluated (with its backtick commands run); else evaluated here. */
  dagEnv?: Record<string, string>;
  specText?: string;
  root?: { name: string; dagRunId: string };
  callers?: readonly string[];
  /** A sub DAG run masks what its parent masks (values only: they are no variables of its own). */
  inheritedSecrets?: readonly string[];
  /** What decides whether the run is traced, and under which span (trace-plan.ts). */
  trace?: Omit<TraceChoice, 'own'>;
}

/**
 * The run's plan. A definition's steps are planned 1,000 per turn of the event loop: a start of a
 * run of 10,000 steps answers other requests meanwhile.
 */
export async function planRun({ dag, name, dagRunId, attemptId, params, systemEnv, logs, variables, dagEnv, specText, root, callers, inheritedSecrets, trace: tracing }: PlanInput): Promise<RunPlan> {
  const logPath = logs.runLogPath(name, dagRunId, attemptId, dag.logDir);
  const positional = positionalParams(params);
  const scope = runScope({ dag, name, dagRunId, logPath, systemEnv, variables });
  // The DAG's env is evaluated before the params and without them; a param wins over an env variable of its name, as in Dagu.
  const baseEnv = { ...scope, ...(dagEnv ?? evaluateEnv(dag.env, scope)), ...namedParams(params), ...variables?.secrets };
  const indexOf = await stepIndexes(dag.steps);
  const services = runServices(dag, name, attemptId, baseEnv);
  const mail = runMail(dag, baseEnv);
  const trace = runTrace({ own: dag.otel, ...tracing }, baseEnv);
  return {
    ...(services ? { services } : {}),
    ...(trace ? { trace } : {}),
    ...(mail ? { mail } : {}),
    ...(Object.keys(dag.workerSelector).length > 0 ? { workerSelector: { ...dag.workerSelector } } : {}),
    name, dagRunId, attemptId, logPath,
    root: root ?? { name, dagRunId },
    callers: callers ?? [],
    specText: specText ?? '',
    maxActiveSteps: dag.maxActiveSteps,
    maxCleanUpTimeSec: dag.maxCleanUpTimeSec,
    timeoutSec: dag.timeoutSec,
    delaySec: dag.delaySec,
    maxOutputSize: dag.maxOutputSize,
    baseEnv,
    positional,
    secrets: [...new Set([...Object.values(variables?.secrets ?? {}), ...inheritedSecrets ?? []])].filter((value) => value !== ''),
    steps: await mapInTurns(dag.steps, (step, index) => planStep(step, dag, logs.stepPaths(name, dagRunId, attemptId, index, step.name, dag.logDir), step.depends, indexOf)),
    // Handler logs are numbered 000, before the steps'.
    handlers: Object.fromEntries(Object.entries(dag.handlerOn).map(([kind, step]) => [
      kind, planStep(step!, dag, logs.stepPaths(name, dagRunId, attemptId, -1, HANDLER_NODE_NAMES[kind as HandlerKind], dag.logDir), [], indexOf),
    ])),
  };
}

/**
 * The step's shell: its own, else the DAG's (a script's shebang chooses its interpreter unless the
 * step itself sets a shell). nix-shell installs the step's `shellPackages` (nix-shell.ts).
 */
function plannedShell(step: Step, dag: Dag): string[] | undefined {
  const shell = step.shell ?? (step.script?.startsWith('#!') && step.shellPackages.length === 0 ? undefined : dag.shell);
  return shell && step.shellPackages.length > 0 && isNixShell(shell) ? nixShellWords(shell, step.shellPackages) : shell;
}

/** Each step's index by its name and by its id: a dependency names a step either way. */
async function stepIndexes(steps: readonly Step[]): Promise<Map<string, number>> {
  const indexOf = new Map<string, number>();
  await eachInTurns(steps.length, (index) => {
    indexOf.set(steps[index].name, index);
    if (steps[index].id) indexOf.set(steps[index].id!, index);
  });
  return indexOf;
}

function subDagOf(step: Step): PlannedStep['call'] {
  const target = step.call ?? (step.executor.type === 'dag' ? step.command : undefined);
  if (target === undefined) return undefined;
  return {
    target, ...(step.params !== undefined ? { params: step.params } : {}), ...(step.parallel ? { parallel: step.parallel } : {}),
    ...(step.workerSelector ? { workerSelector: { ...step.workerSelector } } : {}),
  };
}

/** A step of the plan: its definition with the DAG's shell, its dependencies by index and its log paths. */
function planStep(step: Step, dag: Dag, paths: StepLogPaths, depends: readonly string[], indexOf: Map<string, number>): PlannedStep {
  const call = subDagOf(step);
  return {
    name: step.name,
    id: step.id,
    depends: depends.map((dependency) => indexOf.get(dependency)!),
    command: step.command,
    commands: step.commands,
    script: step.script,
    // A script's shebang chooses its interpreter unless the step itself sets a shell: the DAG's does not override it.
    shell: plannedShell(step, dag),
    dir: step.dir,
    ...(isExpandedDir(step.dir) ? { dirBase: dag.workingDir } : {}),
    env: step.env,
    output: step.output,
    outputKey: step.output !== undefined && !step.outputOmit ? step.outputKey ?? outputKeyOf(step.output) : undefined,
    preconditions: step.preconditions,
    continueOn: step.continueOn,
    timeoutSec: step.timeoutSec,
    retryPolicy: step.retryPolicy,
    repeatPolicy: step.repeatPolicy,
    ...(call ? { call } : {}),
    signalOnStop: step.signalOnStop,
    executor: executorOf(step, dag),
    stdout: paths.stdout,
    stderr: paths.stderr,
    scriptPath: paths.script,
    ...(step.stdout !== undefined ? { stdoutCopy: step.stdout } : {}),
    ...(step.stderr !== undefined ? { stderrCopy: step.stderr } : {}),
    ...(step.mailOnError ? { mailOnError: true } : {}),
  };
}

/** A DAG-level container or ssh runs the steps the shell would run (definition format: DAG-level container). */
function executorOf(step: Step, dag: Dag): PlannedStep['executor'] {
  if (step.executor.type !== 'shell' && step.executor.type !== 'command') return step.executor;
  if (dag.container) return { type: 'docker', config: {} };
  if (dag.ssh) return { type: 'ssh', config: {} };
  return step.executor;
}

/**
 * The root fields executors read, with their references expanded against the run's variables.
 * The DAG-level container is named after the run's attempt: one container per attempt, its name
 * valid for Docker ([a-zA-Z0-9][a-zA-Z0-9_.-]*).
 */
function runServices(dag: Dag, name: string, attemptId: string, env: Record<string, string>): StepServices | undefined {
  const hasAuths = Object.keys(dag.registryAuths).length > 0;
  if (!dag.container && !dag.ssh && !dag.smtp && !hasAuths) return undefined;
  const scope: ExpandScope = { get: (key) => ownValue(env, key) };
  const services: StepServices = {};
  if (dag.container) {
    const containerName = `troupe-${name}-${attemptId}`.replace(/[^a-zA-Z0-9_.-]/g, '-').slice(0, 120);
    const spec = expandStrings(dag.container, scope);
    services.container = { spec: { ...spec, volumes: spec.volumes.map((volume) => hostPathResolved(volume, dag.workingDir, env.HOME)) }, name: containerName };
  }
  if (dag.ssh) services.ssh = expandStrings(dag.ssh, scope);
  if (dag.smtp) services.smtp = expandStrings(dag.smtp, scope);
  if (hasAuths) services.registryAuths = expandStrings(dag.registryAuths, scope);
  return services;
}

/**
 * A volume `host:container[:mode]` whose host side is a relative path (`./data`, `../x`, `~/y`)
 * with that path resolved; a bare name is a named volume, and an absolute path stays as it is.
 */
function hostPathResolved(volume: string, workingDir: string, home: string | undefined): string {
  const [host, ...rest] = volume.split(':');
  let resolved = host;
  if (host === '~' || host.startsWith('~/')) resolved = home ? join(home, host.slice(1)) : host;
  else if (host === '.' || host === '..' || host.startsWith('./') || host.startsWith('../')) resolved = resolve(workingDir, host);
  return [resolved, ...rest].join(':');
}

/** The run's mail settings, their references expanded (a prefix may name the environment, as in Dagu). */
function runMail(dag: Dag, env: Record<string, string>): RunMailPlan | undefined {
  const stepMails = dag.steps.some((step) => step.mailOnError);
  if (!dag.mailOn.failure && !dag.mailOn.success && !stepMails) return undefined;
  const scope: ExpandScope = { get: (key) => ownValue(env, key) };
  return {
    mailOn: dag.mailOn,
    ...(dag.errorMail ? { errorMail: expandStrings(dag.errorMail, scope) } : {}),
    ...(dag.infoMail ? { infoMail: expandStrings(dag.infoMail, scope) } : {}),
  };
}

/** Every string in a value of the definition, its references expanded (no shell reads them). */
export function expandStrings<T>(value: T, scope: ExpandScope): T {
  if (typeof value === 'string') return expandVariables(value, scope) as T;
  if (Array.isArray(value)) return value.map((item) => expandStrings(item, scope)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandStrings(item, scope)])) as T;
  }
  return value;
}

/**
 * The default key of an output in the outputs document, as Dagu makes it: lower case, each part
 * after an underscore capitalised (TOTAL_COUNT becomes totalCount, jsonList jsonlist).
 */
export function outputKeyOf(name: string): string {
  const [first, ...rest] = name.toLowerCase().split('_').filter(Boolean);
  return (first ?? '') + rest.map((part) => part[0].toUpperCase() + part.slice(1)).join('');
}

/** Positional parameters under "1", "2"...: referenced as $1 but not exported. */
export function positionalParams(params: ParamDef[]): Record<string, string> {
  return Object.fromEntries(Object.entries(paramsRecord(params)).filter(([key]) => /^[0-9]+$/.test(key)));
}

/**
 * What the DAG's env is evaluated against, then the param defaults with the env on top: dotenv files
 * < the allowed system variables < built-ins. The params go on top of the env, the secrets on top of
 * them, a step's own env last.
 */
export function runScope(input: Pick<PlanInput, 'dag' | 'name' | 'dagRunId' | 'systemEnv' | 'variables'> & { logPath: string }): Record<string, string> {
  const builtins = { DAG_NAME: input.name, DAG_RUN_ID: input.dagRunId, DAG_RUN_LOG_FILE: input.logPath };
  return { ...input.variables?.dotenv, ...input.systemEnv, ...builtins };
}

function namedParams(params: ParamDef[]): Record<string, string> {
  return Object.fromEntries(Object.entries(paramsRecord(params)).filter(([key]) => !/^[0-9]+$/.test(key)));
}

/** What reads a step's script: the command it is handed to, its shebang's program, or the shell (shell.executor.ts). */
function scriptInterpreter(step: PlannedStep): readonly string[] {
  if (step.command !== undefined) return splitWords(step.command);
  return (step.shell === undefined ? shebangOf(step.script ?? '') : undefined) ?? step.shell ?? DEFAULT_SHELL;
}

/** The data a step's task is built from when its env runs backtick commands (plain data). */
export interface PendingTask {
  plan: RunPlan;
  index: number;
  outputs: Record<string, string>;
  nodes: NodeRecord[];
  /** A handler's task: which one, and the run's status label for DAG_RUN_STATUS. */
  handler?: { kind: HandlerKind; status: string };
}

/** The planned step a pending task is for. */
export function pendingStep(pending: PendingTask): PlannedStep {
  return pending.handler ? pending.plan.handlers[pending.handler.kind]! : pending.plan.steps[pending.index];
}

/** Whether a step's own env holds backtick commands: its task is then built when it starts. */
export function needsCommands(step: PlannedStep): boolean {
  return step.env.some(([, value]) => value.includes('`'));
}

/** The task for one step, with outputs of earlier steps and the results of steps with ids in scope. */
export function stepTask(plan: RunPlan, index: number, outputs: Record<string, string>, nodes: NodeRecord[] = []): StepTask {
  const scope = { ...plan.baseEnv, ...outputs };
  return taskWithEnv(plan, plan.steps[index], nodes, scope, evaluateEnv(plan.steps[index].env, { ...scope, ...plan.positional }));
}

/** The task of a lifecycle handler: DAG_RUN_STATUS holds the run's status label (succeeded, failed...). */
export function handlerTask(plan: RunPlan, kind: HandlerKind, outputs: Record<string, string>, nodes: NodeRecord[], status: string): StepTask {
  const step = plan.handlers[kind]!;
  const scope = { ...plan.baseEnv, ...outputs, DAG_RUN_STATUS: status };
  return taskWithEnv(plan, step, nodes, scope, evaluateEnv(step.env, { ...scope, ...plan.positional }));
}

/** stepTask for a step whose env runs backtick commands, which run on the pool in order. */
export async function stepTaskWithCommands(pending: PendingTask, run: RunCommand): Promise<StepTask> {
  const { plan, outputs, nodes } = pending;
  const step = pendingStep(pending);
  const scope = { ...plan.baseEnv, ...outputs, ...(pending.handler ? { DAG_RUN_STATUS: pending.handler.status } : {}) };
  const stepEnv = await evaluateEnvWithCommands(step.env, { ...scope, ...plan.positional }, run, { values: plan.secrets, shell: step.shell });
  return taskWithEnv(plan, step, nodes, scope, stepEnv);
}

/** Index of each step by its id, built once per run: a chain of steps that each refer to the one before would search the run for every reference. */
const idIndexes = new WeakMap<readonly PlannedStep[], Map<string, number>>();

function stepsById(steps: readonly PlannedStep[]): Map<string, number> {
  let byId = idIndexes.get(steps);
  if (!byId) {
    byId = new Map();
    // The first step with an id wins, as a search from the start would find it.
    steps.forEach((step, index) => {
      if (step.id !== undefined && !byId!.has(step.id)) byId!.set(step.id, index);
    });
    idIndexes.set(steps, byId);
  }
  return byId;
}

/** What `${id.exitCode}`, `${id.stdout}` and `${id.stderr}` read of a step. */
export interface StepResultRef {
  exitCode?: number;
  stdout: string;
  stderr: string;
}

/** The step at `at`, as its node stands now. */
function stepResultAt(plan: RunPlan, nodes: readonly NodeRecord[], at: number): StepResultRef {
  return { exitCode: nodes[at]?.exitCode, stdout: plan.steps[at].stdout, stderr: plan.steps[at].stderr };
}

/** Every step with an id, as its node stands now: what a step's conditions read of the steps before it (plain data). */
export function stepResults(plan: RunPlan, nodes: readonly NodeRecord[]): Record<string, StepResultRef> {
  const results: Record<string, StepResultRef> = Object.create(null);
  for (const [id, at] of stepsById(plan.steps)) results[id] = stepResultAt(plan, nodes, at);
  return results;
}

/** Whether a step has conditions, which may read the steps before it. */
export function hasConditions(step: Pick<PlannedStep, 'preconditions' | 'repeatPolicy'>): boolean {
  return step.preconditions.length > 0 || step.repeatPolicy?.condition !== undefined;
}

function taskWithEnv(plan: RunPlan, step: PlannedStep, nodes: NodeRecord[], scope: Record<string, string>, stepEnv: Record<string, string>): StepTask {
  const env: Record<string, string> = {
    ...scope,
    ...stepEnv,
    DAG_RUN_STEP_NAME: step.name,
    DAG_RUN_STEP_STDOUT_FILE: step.stdout,
    DAG_RUN_STEP_STDERR_FILE: step.stderr,
  };
  const references: ExpandScope = {
    get: (name) => ownValue(env, name) ?? ownValue(plan.positional, name),
    // The first step with the id, as a search would find it.
    step: (id) => {
      const at = stepsById(plan.steps).get(id);
      return at === undefined ? undefined : stepResultAt(plan, nodes, at);
    },
  };
  // Values reach a shell through its environment, never as the text of its code (shell-references.ts).
  const shellReferences = new ShellReferences(plan.secrets, env);
  // jq, http and archive read their command and input themselves: no shell would expand a reference there.
  const noShell = EXECUTORS_WITHOUT_SHELL.has(step.executor.type) ? NO_SHELL : undefined;
  const shell = noShell ?? step.shell ?? DEFAULT_SHELL;
  const config = step.executor.config;
  return {
    // An executor's config reads variables as a step's fields do; no shell reads it.
    executor: Object.keys(config).length === 0 ? step.executor : { type: step.executor.type, config: expandStrings(config, references) },
    ...(plan.services ? { services: plan.services } : {}),
    shell: step.shell,
    command: step.command === undefined ? undefined : shellReferences.shellCode(step.command, references, shell),
    ...(step.commands ? { commands: step.commands.map((line) => shellReferences.shellCode(line, references, shell)) } : {}),
    script: step.script === undefined ? undefined : shellReferences.shellCode(step.script, references, noShell ?? scriptInterpreter(step)),
    scriptPath: step.scriptPath,
    env: shellReferences.environment(),
    workingDir: step.dirBase === undefined ? step.dir : expandedDir(step.dir, step.dirBase, env),
    stdoutPath: step.stdout,
    stderrPath: step.stderr,
    ...(step.stdoutCopy !== undefined ? { stdoutCopy: step.stdoutCopy } : {}),
    ...(step.stderrCopy !== undefined ? { stderrCopy: step.stderrCopy } : {}),
    // continueOn.output matches against the captured stdout.
    captureOutput: step.output !== undefined || (step.continueOn?.output.length ?? 0) > 0,
    maxOutputSize: plan.maxOutputSize,
    secrets: plan.secrets,
  };
}
