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

/** A precondition (workflow-format 2.6): a command that must exit 0, or a value to compare. */
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

/** When a failed or skipped step lets its dependents go on (2.7). */
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

export interface Step {
  name: string;
  id?: string;
  description?: string;
  /** A one-line command, run through the shell. */
  command?: string;
  /** A multi-line command or `script`: written to a file and run, honouring a shebang. */
  script?: string;
  depends: string[];
  /** Working directory, resolved against the DAG's. */
  dir: string;
  shell?: string[];
  /** Variable that receives the trimmed stdout. */
  output?: string;
  env: Array<[string, string]>;
  signalOnStop: string;
  executor: ExecutorConfig;
  preconditions: Condition[];
  continueOn?: ContinueOn;
  retryPolicy?: RetryPolicy;
  repeatPolicy?: RepeatPolicy;
  /** Fields accepted by the format whose runtime belongs to a later capability. */
  extra: Record<string, unknown>;
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
  steps: Step[];
  extra: Record<string, unknown>;
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
