// YAML text -> validated, normalised Dag. Pure: no clock, no processes, no file system.
import { posix as path } from 'node:path';
import { DAG_DEFAULTS, dagNameProblem, type Dag, type Handlers, type ParamDef, type Step } from '../core/index.ts';
import { isMultiLine, splitWords } from './command.ts';
import { FieldReader, dropUndefined, isPlainMap } from './field-reader.ts';
import { formatIssue, type Path, type SpecIssue } from './issues.ts';
import { ROOT_KEYS, STEP_KEYS, closestKey } from './keys.ts';
import { paramsFromText } from './params.ts';
import { paramNameProblem } from './param-names.ts';
import { readConditions, readContinueOn, readRepeatPolicy, readRetryPolicy } from './policies.ts';
import { readSchedule } from './schedule.ts';
import { isExpandedDir } from './step-dir.ts';
import { readDotenv, readSecrets } from './secrets.ts';
import { readContainer, readMail, readMailOn, readOtel, readRegistryAuths, readRootSsh, readSmtp } from './services.ts';
import { readExecutor } from './executors.ts';
import { readStepFields } from './step-fields.ts';
import { readYaml, type YamlDocument } from './yaml-source.ts';
import { dependencyIssues } from './graph.ts';
import { mayHoldNul, nulBytePaths } from './nul-bytes.ts';

export interface ParseOptions {
  /** The DAG file's name without extension: the default DAG name. */
  fileName?: string;
  /** Used when neither the spec nor the file supplies a name. */
  defaultName?: string;
  /** Wins over the spec's name (inline runs, dagName overrides). */
  nameOverride?: string;
  /** Directory of the DAG file: the default working directory. */
  baseDir: string;
}

export interface ParseResult {
  /** Present whenever the text could be read as a DAG, even with problems. */
  dag?: Dag;
  issues: SpecIssue[];
  errors: string[];
  localDags: Array<{ name: string; dag?: Dag; errors: string[] }>;
}

/**
 * A text read: plain data (no functions, Maps or class instances), so that a worker thread can
 * produce it. `finishParse` turns it into the parse result. A `call` of a DAG that does not exist
 * is no problem of the text: the DAG may be created later, and the step fails if it is not there
 * when it runs (docs/api.md, Call cycles).
 */
export interface DefinitionRead {
  dag?: Dag;
  issues: SpecIssue[];
  locals: Array<{ name: string; dag?: Dag; issues: SpecIssue[]; duplicate?: SpecIssue }>;
}

export type ReadOptions = ParseOptions;

export function parseDag(text: string, options: ParseOptions): ParseResult {
  return finishParse(readDefinition(text, options));
}

/** The costly part of a parse (the YAML and every check of the text alone). */
export function readDefinition(text: string, options: ReadOptions): DefinitionRead {
  const source = readYaml(text);
  const [main, ...locals] = source.documents;
  // One test of the whole text, not one per document: a file of many local DAGs stays linear.
  const nul = mayHoldNul(text);
  const result = main && source.issues.length === 0 ? parseDocument(main, options, nul) : { issues: [] as SpecIssue[] };
  // Empty, blank or only comments: no document at all, which would otherwise pass with no problem.
  if (!main) result.issues.push({ path: '', message: 'the definition is empty: a DAG needs at least steps' });
  const parsedLocals = locals.map((doc, index) => ({ doc, ...parseDocument(doc, { baseDir: options.baseDir, defaultName: `local_${index + 1}` }, nul) }));
  const seen = new Set<string>();
  return {
    dag: result.dag,
    issues: [...source.issues, ...result.issues],
    locals: parsedLocals.map((local, index) => {
      const name = local.dag?.name ?? `local_${index + 1}`;
      const duplicate = seen.has(name) ? { path: 'name', line: local.doc.lineOf(['name']), message: `duplicate local DAG "${name}"` } : undefined;
      seen.add(name);
      return dropUndefined({ name, dag: local.dag, issues: local.issues, duplicate });
    }),
  };
}

/** The parse result of a read. */
export function finishParse(read: DefinitionRead): ParseResult {
  const localDags = read.locals.map((local) => {
    const localIssues = [...local.issues, ...(local.duplicate ? [local.duplicate] : [])];
    return { name: local.name, dag: local.dag, errors: localIssues.map(formatIssue) };
  });
  return { dag: read.dag, issues: read.issues, errors: read.issues.map(formatIssue), localDags };
}

/** `nul`: whether the text may hold a NUL byte (mayHoldNul), so that its values are searched for one. */
function parseDocument(doc: YamlDocument, options: ReadOptions, nul: boolean): { dag?: Dag; issues: SpecIssue[] } {
  const reader = new FieldReader(doc);
  const value = doc.value ?? {};
  if (nul) for (const path of nulBytePaths(value)) reader.report(path, 'must not contain a NUL byte');
  if (!isPlainMap(value)) {
    reader.report([], 'a DAG definition must be a map of fields');
    return { issues: reader.issues };
  }
  for (const key of Object.keys(value)) {
    if (!(ROOT_KEYS as readonly string[]).includes(key)) {
      const hint = closestKey(key, ROOT_KEYS);
      reader.report([key], `unknown field "${key}"${hint ? `; did you mean "${hint}"?` : ''}`);
    }
  }

  const name = options.nameOverride ?? reader.string(value, 'name', []) ?? options.fileName ?? options.defaultName ?? '';
  const nameProblem = dagNameProblem(name);
  if (nameProblem) reader.report(options.nameOverride ? [] : ['name'], nameProblem);

  const type = reader.string(value, 'type', []) ?? 'chain';
  if (type !== 'chain' && type !== 'graph') reader.report(['type'], 'must be "chain" or "graph"');

  const workingDirText = reader.string(value, 'workingDir', []);
  const workingDir = workingDirText ? path.resolve(options.baseDir, workingDirText) : options.baseDir;

  const dag: Dag = dropUndefined({
    name,
    description: reader.string(value, 'description', []),
    group: reader.string(value, 'group', []),
    tags: reader.stringList(value, 'tags', [], true) ?? [],
    type: type === 'graph' ? 'graph' : 'chain',
    params: readParams(reader, value.params),
    env: reader.env(value.env, ['env']),
    shell: readShell(reader, value, []),
    workingDir,
    logDir: resolvedDir(reader.string(value, 'logDir', []), workingDir),
    maxActiveRuns: readMaxActiveRuns(reader, value),
    // 0: no limit, as Dagu reads it (unset is the specification's 1).
    maxActiveSteps: reader.integer(value, 'maxActiveSteps', [], 0) ?? DAG_DEFAULTS.maxActiveSteps,
    maxCleanUpTimeSec: reader.integer(value, 'maxCleanUpTimeSec', []) ?? DAG_DEFAULTS.maxCleanUpTimeSec,
    timeoutSec: reader.integer(value, 'timeoutSec', []) ?? DAG_DEFAULTS.timeoutSec,
    delaySec: reader.integer(value, 'delaySec', []) ?? DAG_DEFAULTS.delaySec,
    histRetentionDays: reader.integer(value, 'histRetentionDays', []) ?? DAG_DEFAULTS.histRetentionDays,
    maxOutputSize: reader.integer(value, 'maxOutputSize', [], 1) ?? DAG_DEFAULTS.maxOutputSize,
    preconditions: readPreconditions(reader, value, []),
    schedule: readSchedule(reader, value.schedule, ['schedule']),
    skipIfSuccessful: reader.boolean(value, 'skipIfSuccessful', []) ?? false,
    restartWaitSec: reader.integer(value, 'restartWaitSec', []) ?? 0,
    runConfig: readRunConfig(reader, value),
    secrets: readSecrets(reader, value.secrets),
    dotenv: readDotenv(reader, value),
    container: readContainer(reader, value),
    ssh: readRootSsh(reader, value),
    registryAuths: readRegistryAuths(reader, value),
    queue: reader.string(value, 'queue', []),
    workerSelector: reader.stringMap(value, 'workerSelector', []) ?? {},
    otel: readOtel(reader, value),
    mailOn: readMailOn(reader, value),
    errorMail: readMail(reader, value, 'errorMail'),
    infoMail: readMail(reader, value, 'infoMail'),
    smtp: readSmtp(reader, value),
    handlerOn: {},
    steps: [],
  });
  if (dag.container && dag.ssh) reader.report(['ssh'], 'ssh and container cannot both be set at DAG level');

  if (value.steps === undefined || value.steps === null) {
    reader.report(['steps'], 'steps is required');
  } else if (!Array.isArray(value.steps)) {
    reader.report(['steps'], 'must be a list of steps');
  } else {
    dag.steps = readSteps(reader, value.steps, dag);
    for (const issue of dependencyIssues(dag.steps)) reader.report(['steps', issue.index, 'depends'], issue.message);
  }
  dag.handlerOn = readHandlers(reader, value, dag);
  return { dag, issues: reader.issues };
}

const HANDLER_NAMES = { init: 'onInit', success: 'onSuccess', failure: 'onFailure', abort: 'onCancel', exit: 'onExit' } as const;

/** handlerOn: each key a step-like map; `cancel` is the deprecated name of `abort`. */
function readHandlers(reader: FieldReader, root: Record<string, unknown>, dag: Dag): Handlers {
  const value = reader.map(root, 'handlerOn', [], 'init, success, failure, abort, exit');
  const handlers: Handlers = {};
  if (!value) return handlers;
  reader.knownKeys(value, ['init', 'success', 'failure', 'abort', 'cancel', 'exit'], ['handlerOn']);
  if (value.abort !== undefined && value.cancel !== undefined) reader.report(['handlerOn', 'cancel'], 'use abort or cancel (its old name), not both');
  for (const kind of Object.keys(HANDLER_NAMES) as Array<keyof typeof HANDLER_NAMES>) {
    const key = kind === 'abort' && value.abort === undefined ? 'cancel' : kind;
    if (value[key] === undefined || value[key] === null) continue;
    const raw = typeof value[key] === 'string' ? { command: value[key] } : value[key];
    const named = isPlainMap(raw) && raw.name === undefined ? { ...raw, name: HANDLER_NAMES[kind] } : raw;
    const step = readStep(reader, named, ['handlerOn', key], dag, 0);
    if (!step) continue;
    if (explicitDepends.has(step)) reader.report(['handlerOn', key, 'depends'], 'a handler has no dependencies');
    step.depends = [];
    handlers[kind] = step;
  }
  return handlers;
}

function readRunConfig(reader: FieldReader, root: Record<string, unknown>): Dag['runConfig'] {
  const value = reader.map(root, 'runConfig', [], 'disableParamEdit, disableRunIdEdit');
  if (!value) return { disableParamEdit: false, disableRunIdEdit: false };
  reader.knownKeys(value, ['disableParamEdit', 'disableRunIdEdit'], ['runConfig']);
  return {
    disableParamEdit: reader.boolean(value, 'disableParamEdit', ['runConfig']) ?? false,
    disableRunIdEdit: reader.boolean(value, 'disableRunIdEdit', ['runConfig']) ?? false,
  };
}

/** A directory of the definition, resolved against the DAG's working directory. */
function resolvedDir(text: string | undefined, workingDir: string): string | undefined {
  return text ? path.resolve(workingDir, text) : undefined;
}

function readMaxActiveRuns(reader: FieldReader, value: Record<string, unknown>): number {
  const runs = reader.integer(value, 'maxActiveRuns', [], -1);
  if (runs === 0) reader.report(['maxActiveRuns'], 'must be -1 (unlimited) or at least 1');
  return runs ?? DAG_DEFAULTS.maxActiveRuns;
}

/** The definition's params, a refused name (param-names.ts) reported: a default is as overridable as any param. */
function readParams(reader: FieldReader, value: unknown): ParamDef[] {
  const params = readParamList(reader, value);
  for (const param of params) {
    const problem = param.name === undefined ? undefined : paramNameProblem(param.name);
    if (problem) reader.report(['params', param.name!], `param name ${problem}`);
  }
  return params;
}

function readParamList(reader: FieldReader, value: unknown): ParamDef[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return paramsFromText(value);
  // A map NAME: default is the list form in map order (Dagu's), each value as text.
  if (isPlainMap(value)) {
    return Object.entries(value).flatMap(([name, raw]) => {
      if (raw !== null && typeof raw === 'object') {
        reader.report(['params', name], 'must be a text, a number or a boolean');
        return [];
      }
      return [{ name, value: raw === null || raw === undefined ? '' : String(raw) }];
    });
  }
  if (!Array.isArray(value)) {
    reader.report(['params'], 'must be a list of NAME: default maps, a map of NAME: default, or a string');
    return [];
  }
  const params: ParamDef[] = [];
  value.forEach((item, index) => {
    if (isPlainMap(item) && Object.keys(item).length === 1) {
      const [name, raw] = Object.entries(item)[0];
      params.push({ name, value: raw === null || raw === undefined ? '' : String(raw) });
    } else if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') {
      params.push(...paramsFromText(String(item)));
    } else {
      reader.report(['params', index], 'must be a NAME: default map or a value');
    }
  });
  return params;
}

function readShell(reader: FieldReader, map: Record<string, unknown>, at: Path): string[] | undefined {
  const value = map.shell;
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return splitWords(value);
  if (Array.isArray(value) && value.length > 0 && value.every((part) => typeof part === 'string')) return value as string[];
  reader.report([...at, 'shell'], 'must be a string or a non-empty list of strings');
  return undefined;
}

/** Flattens nested-array groups and applies chain and group dependencies. */
function readSteps(reader: FieldReader, items: unknown[], dag: Dag): Step[] {
  const steps: Step[] = [];
  let previous: string[] = [];
  items.forEach((item, index) => {
    if (Array.isArray(item)) {
      const group: Step[] = [];
      item.forEach((member, memberIndex) => {
        const step = readStep(reader, member, ['steps', index, memberIndex], dag, steps.length + 1, { group: index + 1, index: memberIndex + 1 });
        if (!step) return;
        if (!explicitDepends.has(step)) step.depends = [...previous];
        group.push(step);
        steps.push(step);
      });
      previous = group.map((step) => step.name);
      return;
    }
    const step = readStep(reader, item, ['steps', index], dag, steps.length + 1);
    if (!step) return;
    if (!explicitDepends.has(step) && (dag.type === 'chain' || Array.isArray(items[index - 1]))) step.depends = [...previous];
    steps.push(step);
    previous = [step.name];
  });
  const seen = new Map<string, number>();
  steps.forEach((step, index) => {
    if (seen.has(step.name)) reader.report(stepPath(items, index), `duplicate step name "${step.name}"`);
    seen.set(step.name, index);
  });
  const ids = new Set<string>();
  steps.forEach((step, index) => {
    if (step.id === undefined) return;
    if (ids.has(step.id) || (seen.has(step.id) && steps[seen.get(step.id)!] !== step)) {
      reader.report(stepPath(items, index), `duplicate step id "${step.id}"`);
    }
    ids.add(step.id);
  });
  return steps;
}

/** The YAML paths of the flat steps, built once per list: problems of thousands of steps stay linear. */
const flatPaths = new WeakMap<unknown[], Path[]>();

function stepPath(items: unknown[], flatIndex: number): Path {
  let paths = flatPaths.get(items);
  if (!paths) {
    paths = [];
    items.forEach((item, i) => {
      if (Array.isArray(item)) item.forEach((_, member) => paths!.push(['steps', i, member]));
      else paths!.push(['steps', i]);
    });
    flatPaths.set(items, paths);
  }
  return paths[flatIndex] ?? ['steps'];
}

/** Steps whose definition lists their dependencies: chains and groups leave them as they are. */
const explicitDepends = new WeakSet<Step>();

function readStep(
  reader: FieldReader,
  raw: unknown,
  at: Path,
  dag: Dag,
  position: number,
  group?: { group: number; index: number },
): Step | undefined {
  const value = typeof raw === 'string' ? { command: raw } : raw;
  if (!isPlainMap(value)) {
    reader.report(at, 'a step must be a map or a command string');
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!(STEP_KEYS as readonly string[]).includes(key)) {
      const hint = closestKey(key, STEP_KEYS);
      reader.report([...at, key], `unknown field "${key}"${hint ? `; did you mean "${hint}"?` : ''}`);
    }
  }
  const commandList = readCommandList(reader, value, at);
  const commandText = commandList ? commandList.join('\n') : reader.string(value, 'command', at);
  const scriptText = reader.string(value, 'script', at);
  const executor = readExecutor(reader, value.executor, at, {
    command: commandText, script: scriptText, dagContainer: dag.container !== undefined, dagSsh: dag.ssh !== undefined,
  });
  if (value.call !== undefined && value.run !== undefined) reader.report([...at, 'run'], 'use call or run (its old name), not both');
  const call = reader.string(value, 'call', at) ?? reader.string(value, 'run', at);
  if (commandText === undefined && scriptText === undefined && call === undefined && value.executor === undefined) {
    reader.report(at, 'a step needs a command, a script, a call or an executor');
  }
  // A jq filter may span lines: it stays the command (Dagu would take it for the input JSON).
  const multiLine = executor.type !== 'jq' && commandList === undefined && commandText !== undefined && isMultiLine(commandText);
  if (commandList && !['shell', 'command'].includes(executor.type)) reader.report([...at, 'command'], `a list of commands runs with the shell executor, not ${executor.type}`);
  if (value.dir !== undefined && value.workingDir !== undefined) reader.report([...at, 'workingDir'], 'use dir or workingDir, not both');
  const dirText = reader.string(value, 'dir', at) ?? reader.string(value, 'workingDir', at);
  // One that names variables or ~ is kept as written: the run expands it as the step starts.
  const dirLater = dirText !== undefined && isExpandedDir(dirText);
  const dir = dirText ? (dirLater ? dirText : path.resolve(dag.workingDir, dirText)) : dag.workingDir;
  const dependsList = value.depends === undefined ? undefined : reader.stringList(value, 'depends', at) ?? [];

  const step: Step = dropUndefined({
    name: reader.string(value, 'name', at) ?? generatedName({
      command: commandText, script: scriptText, call, executor: executor.type, explicitExecutor: value.executor !== undefined, parallel: value.parallel !== undefined,
    }, position, group),
    id: reader.string(value, 'id', at),
    description: reader.string(value, 'description', at),
    command: multiLine || commandList ? undefined : commandText?.trim(),
    commands: commandList,
    script: multiLine ? commandText : scriptText,
    depends: dependsList ?? [],
    dir,
    shell: readShell(reader, value, at),
    ...readOutput(reader, value, at),
    env: reader.env(value.env, [...at, 'env']),
    signalOnStop: reader.string(value, 'signalOnStop', at) ?? DAG_DEFAULTS.signalOnStop,
    executor,
    preconditions: readPreconditions(reader, value, at),
    continueOn: readContinueOn(reader, value.continueOn, [...at, 'continueOn']),
    retryPolicy: readRetryPolicy(reader, value.retryPolicy, [...at, 'retryPolicy']),
    repeatPolicy: readRepeatPolicy(reader, value.repeatPolicy, [...at, 'repeatPolicy']),
    ...readStepFields(reader, value, at, dirLater ? dag.workingDir : dir),
    call,
  });
  if (dependsList !== undefined) explicitDepends.add(step);
  if (step.parallel && step.call === undefined && executor.type !== 'dag') reader.report([...at, 'parallel'], 'parallel fans out a sub DAG: it needs call');
  // A step runs where its DAG run runs; only a sub DAG run may go elsewhere (as in Dagu).
  if (step.workerSelector && step.call === undefined && executor.type !== 'dag') reader.report([...at, 'workerSelector'], 'places a sub DAG run on a worker: it needs call');
  if (step.name.trim() === '') reader.report([...at, 'name'], 'must not be empty');
  if (step.id !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(step.id)) {
    reader.report([...at, 'id'], 'must start with a letter or underscore and hold letters, digits and underscores');
  }
  if (!/^(SIG)?[A-Z0-9]+$/.test(step.signalOnStop)) reader.report([...at, 'signalOnStop'], 'must be a signal name such as SIGTERM');
  return step;
}

/** output: a variable name, or {name, key, omit}. */
function readOutput(reader: FieldReader, value: Record<string, unknown>, at: Path): Pick<Step, 'output' | 'outputKey' | 'outputOmit'> {
  const output = value.output;
  if (output === undefined || output === null) return {};
  const map = isPlainMap(output) ? output : undefined;
  if (map) reader.knownKeys(map, ['name', 'key', 'omit'], [...at, 'output']);
  const name = typeof output === 'string' ? output : map?.name;
  if (typeof name !== 'string' || !/^\$?[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    reader.report(map ? [...at, 'output', 'name'] : [...at, 'output'], 'must be a variable name');
    return {};
  }
  const key = map ? reader.string(map, 'key', [...at, 'output']) : undefined;
  const omit = map ? reader.boolean(map, 'omit', [...at, 'output']) : undefined;
  return dropUndefined({ output: name.replace(/^\$/, ''), outputKey: key, outputOmit: omit });
}

/**
 * A step without a name is named by what it is, in this order (Dagu's): an explicit executor
 * (`jq_1`, even with a one-line command), a fan-out (`parallel_2`), a sub DAG call (`dag_3`), a
 * script or multi-line command (`script_4`), else `cmd_5`; N is the step's 1-based position. The
 * steps of a nested-array group are named by their group (docs/api.md).
 */
/** `command` as a list of command lines (Dagu's form): each a non-empty line of text. */
function readCommandList(reader: FieldReader, value: Record<string, unknown>, at: Array<string | number>): string[] | undefined {
  const list = value.command;
  if (!Array.isArray(list)) return undefined;
  if (list.length === 0) {
    reader.report([...at, 'command'], 'a list of commands must not be empty');
    return undefined;
  }
  const lines = list.map((line, index) => {
    if (typeof line !== 'string' && typeof line !== 'number' && typeof line !== 'boolean') {
      reader.report([...at, 'command', index], 'must be a command line');
      return '';
    }
    const text = String(line).trim();
    if (text === '' || text.includes('\n')) reader.report([...at, 'command', index], 'must be one non-empty command line');
    return text;
  });
  return lines;
}

/** `preconditions`, or `precondition` (Dagu's other name for it), with the same value shapes. */
function readPreconditions(reader: FieldReader, value: Record<string, unknown>, at: Array<string | number>) {
  if (value.precondition !== undefined && value.preconditions !== undefined) {
    reader.report([...at, 'precondition'], 'use preconditions or precondition (its other name), not both');
  }
  const key = value.preconditions === undefined && value.precondition !== undefined ? 'precondition' : 'preconditions';
  return readConditions(reader, value[key], [...at, key]);
}

function generatedName(
  step: { command?: string; script?: string; call?: string; executor: string; explicitExecutor: boolean; parallel: boolean },
  position: number,
  group?: { group: number; index: number },
): string {
  const { command, script, call, executor } = step;
  if (group) {
    const firstWord = splitWords(command ?? script ?? call ?? executor)[0] ?? executor;
    return `parallel_${group.group}_${firstWord.replace(/[^A-Za-z0-9_.-]/g, '_')}_${group.index}`;
  }
  if (step.explicitExecutor) return `${executor}_${position}`;
  if (step.parallel) return `parallel_${position}`;
  if (call !== undefined) return `dag_${position}`;
  if (script !== undefined || (command !== undefined && isMultiLine(command))) return `script_${position}`;
  // An executor the step implies (its `container`, say) names a step with nothing else to go by.
  return command !== undefined ? `cmd_${position}` : `${executor}_${position}`;
}

