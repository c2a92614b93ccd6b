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
