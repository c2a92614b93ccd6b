// The API's answers, as far as the dashboard reads them (docs/api.md has the whole shapes).

export interface ErrorDocument { code: string; message: string; details?: unknown }

export interface Pagination { totalRecords: number; currentPage: number; totalPages: number; nextPage: number | null; prevPage: number | null }

export interface RunSummary {
  dagRunId: string;
  name: string;
  status: number;
  statusLabel: string;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
  params: string;
  parentDAGRunId?: string;
  /** The worker that runs or ran it (distributed dispatch); absent when the server runs it. */
  workerId?: string;
}

export interface DagSummary {
  name: string;
  group: string;
  schedule: { expression: string }[];
  description: string;
  params: string[];
  defaultParams: string;
  tags: string[];
}

export interface DagListItem {
  fileName: string;
  dag: DagSummary;
  latestDAGRun: RunSummary;
  suspended: boolean;
  nextRun: string | null;
  errors: string[];
}

export interface DagList { dags: DagListItem[]; errors: string[]; pagination: Pagination }

export interface StepDef { name: string; description?: string; command?: string; args?: string[]; depends?: string[] }

export interface DagDetails extends DagSummary { steps: StepDef[]; maxActiveRuns: number; timeoutSec: number; type: string }

export interface DagDetailsAnswer {
  dag: DagDetails;
  latestDAGRun: RunSummary;
  suspended: boolean;
  nextRun: string | null;
  missedRuns: { kind: string; scheduledAt: string; expression: string }[];
  errors: string[];
}

export interface Node {
  step: StepDef;
  startedAt: string;
  finishedAt: string;
  status: number;
  statusLabel: string;
  retryCount: number;
  doneCount: number;
  error: string;
  subRuns?: SubRunRef[];
  subRunsRepeated?: SubRunRef[];
}

export interface SubRunRef { dagRunId: string; params: string }

export const handlerNames = ['onSuccess', 'onFailure', 'onCancel', 'onExit'] as const;

export type RunDetails = RunSummary & { nodes: Node[] } & { [K in (typeof handlerNames)[number]]: Node | null };

export interface QueueRun { dagRunId: string; name: string; status: number; statusLabel: string; startedAt: string; waitingFor?: string }

export interface Queue {
  name: string;
  type: 'custom' | 'dag-based';
  maxConcurrency?: number;
  summary: { running: number; queued: number; total: number };
  runningDAGRuns: QueueRun[];
  queuedDAGRuns: QueueRun[];
  oldestQueuedAgeSec: number | null;
}

export interface Health { status: string; version: string; uptime: number; timestamp: string }

export interface ValidateAnswer { valid: boolean; errors: string[] }
