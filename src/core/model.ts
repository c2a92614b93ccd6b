// The normalised DAG model produced by spec/ and consumed by the runtime. Plain data only.

export interface ParamDef {
  /** Absent for positional parameters. */
  name?: string;
  value: string;
}

export interface ExecutorConfig {
  type: string;
  config: Record<string, unknown>;
}

/** One cron expression of a schedule, as written and split from its `CRON_TZ=` prefix. */
export interface ScheduleEntry {
  expression: string;
  cron: string;
  timezone?: string;
}

export interface Schedule {
  start: ScheduleEntry[];
  stop: ScheduleEntry[];
  restart: ScheduleEntry[];
}

/** A precondition (definition format: preconditions): a command that must exit 0, or a value to compare. */
export interface Condition {
  /** Text whose expansion (variables, backticks) is compared with `expected`. */
  condition?: string;
  /** A plain value, or `re:` and a regular expression. */
  expected?: string;
  /** A command that must exit 0. */
  command?: string;
  /** The message recorded when the condition does not hold. */
  error?: string;
  negate: boolean;
}

/** When a failed or skipped step lets its dependents go on. */
export interface ContinueOn {
  failure: boolean;
  skipped: boolean;
  exitCode: number[];
  /** Substrings of the output, or `re:` and a regular expression. */
  output: string[];
  markSuccess: boolean;
}

export interface RetryPolicy {
  limit: number;
  intervalSec: number;
  /** Multiplier of the interval per attempt; absent: a constant interval. */
  backoff?: number;
  maxIntervalSec?: number;
  /** Exit codes that trigger a retry; empty: any non-zero code. */
  exitCode: number[];
}

export interface RepeatPolicy {
  /** `while`: repeat while the condition holds or the exit code matches; `until`: until it holds. */
  repeat: 'while' | 'until';
  condition?: string;
  expected?: string;
  exitCode: number[];
  /** Maximum executions; absent: no limit. */
  limit?: number;
  intervalSec: number;
  backoff?: number;
  maxIntervalSec?: number;
}

/** A secret: exposed to steps as `name`, read from the provider; never stored. */
export interface SecretRef {
  name: string;
  provider: 'env' | 'file';
  key: string;
  options: Record<string, string>;
}

/** The DAG-level container. */
export interface ContainerSpec {
  image?: string;
  pullPolicy: 'always' | 'missing' | 'never';
  env: string[];
  volumes: string[];
  workingDir?: string;
  platform?: string;
  user?: string;
  ports: string[];
  network?: string;
  startup: 'keepalive' | 'entrypoint' | 'command';
  command: string[];
  waitFor: 'running' | 'healthy';
  logPattern?: string;
  restartPolicy: 'no' | 'always' | 'unless-stopped';
  keepContainer: boolean;
}

/** SSH settings. */
export interface SshSpec {
  user?: string;
  host?: string;
  port: string;
  key?: string;
  password?: string;
  strictHostKey: boolean;
  knownHostFile?: string;
}

export interface MailSpec {
  from?: string;
  to: string[];
  prefix?: string;
  attachLogs: boolean;
}

export interface SmtpSpec {
  host?: string;
  port?: string;
  username?: string;
  password?: string;
}

export interface OtelSpec {
  enabled: boolean;
  endpoint?: string;
  headers: Record<string, string>;
  insecure: boolean;
  timeout?: string;
  resource: Record<string, string>;
}

/** Lifecycle handlers (handlerOn: init, success, failure, abort, exit); `cancel` is read as `abort`. */
export interface Handlers {
  init?: Step;
  success?: Step;
  failure?: Step;
  abort?: Step;
  exit?: Step;
}

export interface Step {
  name: string;
  id?: string;
  description?: string;
  /** A one-line command, run through the shell. */
  command?: string;
  /** A list of command lines: each runs through the shell on its own, in order, until one fails. */
  commands?: string[];
  /** A multi-line command or `script`: written to a file and run, honouring a shebang. */
  script?: string;
  depends: string[];
  /** Working directory, resolved against the DAG's. */
  dir: string;
  shell?: string[];
  /** Variable that receives the trimmed stdout. */
  output?: string;
  /** The key of that output in the outputs document (default: the variable in camelCase). */
  outputKey?: string;
  /** Keep the output usable in the DAG but out of the outputs document. */
  outputOmit?: boolean;
  /** Files that receive the step's stdout/stderr too. */
  stdout?: string;
  stderr?: string;
  shellPackages: string[];
  mailOnError: boolean;
  /** Overrides the DAG's timeoutSec. */
  timeoutSec?: number;
  /** A DAG (local or a file) to run as a sub DAG run; `run` is read as `call`. */
  /** A call step's: the labels of the worker its sub DAG runs are placed on (distributed dispatch). */
  workerSelector?: Record<string, string>;
  call?: string;
  /** Sub DAG parameters, or executor inputs. */
  params?: string | Record<string, string>;
  /** Fan-out over items; ITEM holds the current one. `items` may be a variable reference. */
  parallel?: { items: unknown[] | string; maxConcurrent?: number };
  env: Array<[string, string]>;
  signalOnStop: string;
  executor: ExecutorConfig;
  preconditions: Condition[];
  continueOn?: ContinueOn;
  retryPolicy?: RetryPolicy;
  repeatPolicy?: RepeatPolicy;
}

export interface Dag {
  name: string;
  description?: string;
  group?: string;
  tags: string[];
  type: 'chain' | 'graph';
  params: ParamDef[];
  env: Array<[string, string]>;
  shell?: string[];
  workingDir: string;
  logDir?: string;
  maxActiveRuns: number;
  maxActiveSteps: number;
  maxCleanUpTimeSec: number;
  timeoutSec: number;
  delaySec: number;
  histRetentionDays: number;
  maxOutputSize: number;
  preconditions: Condition[];
  schedule: Schedule;
  skipIfSuccessful: boolean;
  restartWaitSec: number;
  runConfig: { disableParamEdit: boolean; disableRunIdEdit: boolean };
  secrets: SecretRef[];
  /** Files of variables, relative to workingDir; empty: none loaded. */
  dotenv: string[];
  container?: ContainerSpec;
  ssh?: SshSpec;
  registryAuths: Record<string, { username?: string; password?: string }>;
  queue?: string;
  workerSelector: Record<string, string>;
  otel?: OtelSpec;
  mailOn: { failure: boolean; success: boolean };
  errorMail?: MailSpec;
  infoMail?: MailSpec;
  smtp?: SmtpSpec;
  handlerOn: Handlers;
  steps: Step[];
}

export const DAG_DEFAULTS = {
  maxActiveRuns: 1,
  maxActiveSteps: 1,
  maxCleanUpTimeSec: 5,
  timeoutSec: 0,
  delaySec: 0,
  histRetentionDays: 30,
  maxOutputSize: 1_048_576,
  signalOnStop: 'SIGTERM',
} as const;
