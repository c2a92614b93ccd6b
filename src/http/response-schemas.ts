// Response body schemas (TypeBox), the shapes present.ts and the handlers answer with. The OpenAPI
// document is built from them (openapi.ts), and the integration tests check every response they
// get against that document, so a shape that changes here or there without the other fails a test.
// Objects list every field they send (additionalProperties: false): an undocumented field is drift
// too. Like the body schemas, they are built only when the document is (TypeBox loads lazily).
import type { TSchema } from 'typebox';
import { bodySchema, type BodySchema, type TypeBuilder } from './schemas.ts';

/** A schema the document lists under components.schemas, referred to by name wherever it is used. */
export interface Component {
  name: string;
  build(Type: TypeBuilder): TSchema;
}

const components: Component[] = [];

function component(name: string, build: (Type: TypeBuilder) => TSchema): Component {
  const entry = { name, build };
  components.push(entry);
  return entry;
}

/** Every component, in the order they are declared. */
export function allComponents(): readonly Component[] {
  return components;
}

export const ref = (Type: TypeBuilder, target: Component) => Type.Ref(`#/components/schemas/${target.name}`);

/** An object with exactly these fields. */
const closed = (Type: TypeBuilder, properties: Parameters<TypeBuilder['Object']>[0], description?: string) =>
  Type.Object(properties, { additionalProperties: false, ...(description ? { description } : {}) });

const TIME = 'ISO 8601 time; the empty string while it does not apply';

export const ErrorDocument = component('Error', (Type) => closed(Type, {
  code: Type.String({ description: 'One of the error codes; see each response for the codes it carries' }),
  message: Type.String({ description: 'Human readable' }),
  details: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'For a body that breaks its schema: `errors`, every problem' })),
}, 'Every error response (code, message, details?)'));

export const RunStatusCode = component('Status', (Type) => Type.Integer({
  minimum: 0, maximum: 6,
  description: '0 not started, 1 running, 2 failed, 3 aborted, 4 succeeded, 5 queued, 6 partially succeeded',
}));
export const RunStatusLabel = component('StatusLabel', (Type) =>
  Type.Enum(['not_started', 'running', 'failed', 'aborted', 'succeeded', 'queued', 'partially_succeeded']));
export const NodeStatusCode = component('NodeStatus', (Type) => Type.Integer({
  minimum: 0, maximum: 6,
  description: '0 not started, 1 running, 2 failed, 3 aborted, 4 succeeded, 5 skipped, 6 partially succeeded (a sub DAG call)',
}));
export const NodeStatusLabel = component('NodeStatusLabel', (Type) =>
  Type.Enum(['not_started', 'running', 'failed', 'aborted', 'succeeded', 'skipped', 'partially_succeeded']));

const summaryFields = (Type: TypeBuilder) => ({
  rootDAGRunName: Type.String(),
  rootDAGRunId: Type.String(),
  parentDAGRunName: Type.String({ description: 'Empty for a root run' }),
  parentDAGRunId: Type.String({ description: 'Empty for a root run' }),
  dagRunId: Type.String(),
  name: Type.String({ description: 'DAG name' }),
  status: ref(Type, RunStatusCode),
  statusLabel: ref(Type, RunStatusLabel),
  queuedAt: Type.String({ description: TIME }),
  startedAt: Type.String({ description: TIME }),
  finishedAt: Type.String({ description: TIME }),
  log: Type.String({ description: 'Path of the run log' }),
  params: Type.String({ description: 'The run parameters: a JSON object serialised as text (positional ones under "1", "2"...)' }),
  workerId: Type.Optional(Type.String({ description: 'The worker that runs or ran it (distributed dispatch); absent when this server runs it' })),
});

export const RunSummary = component('DAGRunSummary', (Type) => closed(Type, summaryFields(Type)));

export const Condition = component('Condition', (Type) => closed(Type, {
  condition: Type.String(),
  expected: Type.Optional(Type.String()),
  negate: Type.Optional(Type.Boolean()),
  error: Type.Optional(Type.String()),
}));

export const RepeatPolicy = component('RepeatPolicy', (Type) => closed(Type, {
  repeat: Type.Enum(['while', 'until']),
  interval: Type.Integer({ description: 'Seconds between executions' }),
  limit: Type.Optional(Type.Integer()),
  backoff: Type.Optional(Type.Number()),
  maxIntervalSec: Type.Optional(Type.Integer()),
  condition: Type.Optional(closed(Type, { condition: Type.String(), expected: Type.Optional(Type.String()) })),
  exitCode: Type.Optional(Type.Array(Type.Integer())),
}));

const commandEntry = (Type: TypeBuilder) => closed(Type, { command: Type.String(), args: Type.Array(Type.String()) });

export const Step = component('Step', (Type) => closed(Type, {
  name: Type.String(),
  id: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  dir: Type.Optional(Type.String()),
  command: Type.Optional(Type.String({ description: 'The first word of the (first) command line' })),
  args: Type.Optional(Type.Array(Type.String())),
  commands: Type.Optional(Type.Array(commandEntry(Type), { description: 'Each command line, split into command and args' })),
  script: Type.Optional(Type.String()),
  depends: Type.Optional(Type.Array(Type.String())),
  output: Type.Optional(Type.String()),
  run: Type.Optional(Type.String({ description: 'The sub DAG a call step runs (the same as call)' })),
  call: Type.Optional(Type.String()),
  params: Type.Optional(Type.String({ description: 'Sub DAG parameters as text (a map as JSON)' })),
  parallel: Type.Optional(closed(Type, {
    items: Type.Union([Type.Array(Type.Unknown()), Type.String()]),
    maxConcurrent: Type.Optional(Type.Integer()),
  })),
  stdout: Type.Optional(Type.String()),
  stderr: Type.Optional(Type.String()),
  mailOnError: Type.Optional(Type.Boolean()),
  timeoutSec: Type.Optional(Type.Integer()),
  preconditions: Type.Optional(Type.Array(ref(Type, Condition))),
  repeatPolicy: Type.Optional(ref(Type, RepeatPolicy)),
  executorConfig: closed(Type, {
    type: Type.Optional(Type.String()),
    config: Type.Object({}, { additionalProperties: true }),
  }),
}, 'A step definition as the API shows it'));

const subRunRef = (Type: TypeBuilder) => closed(Type, { dagRunId: Type.String(), params: Type.String() });

export const Node = component('Node', (Type) => closed(Type, {
  step: ref(Type, Step),
  stdout: Type.String({ description: 'Path of the step stdout log' }),
  stderr: Type.String({ description: 'Path of the step stderr log' }),
  startedAt: Type.String({ description: TIME }),
  finishedAt: Type.String({ description: TIME }),
  status: ref(Type, NodeStatusCode),
  statusLabel: ref(Type, NodeStatusLabel),
  retryCount: Type.Integer({ minimum: 0 }),
  doneCount: Type.Integer({ minimum: 0, description: 'Executions that reached an end, succeeded or failed' }),
  subRuns: Type.Array(subRunRef(Type)),
  subRunsRepeated: Type.Array(subRunRef(Type)),
  error: Type.String({ description: 'Empty when none' }),
}, 'A step\'s result inside a run'));

const handlerNode = (Type: TypeBuilder) => Type.Union([ref(Type, Node), Type.Null()]);

export const RunDetails = component('DAGRunDetails', (Type) => closed(Type, {
  ...summaryFields(Type),
  nodes: Type.Array(ref(Type, Node)),
  onSuccess: handlerNode(Type),
  onFailure: handlerNode(Type),
  onCancel: handlerNode(Type),
  onExit: handlerNode(Type),
  preconditions: Type.Array(ref(Type, Condition)),
}, 'A run with its nodes; each handler\'s node, or null when the definition has none'));

const dagSummaryFields = (Type: TypeBuilder) => ({
  name: Type.String(),
  group: Type.String(),
  schedule: Type.Array(closed(Type, { expression: Type.String() })),
  description: Type.String(),
  params: Type.Array(Type.String({ description: 'NAME=value, or the value of a positional parameter' })),
  defaultParams: Type.String({ description: 'The defaults as a JSON object text; empty without params' }),
  tags: Type.Array(Type.String()),
});

export const DagSummary = component('DAG', (Type) => closed(Type, dagSummaryFields(Type)));

export const DagDetails = component('DAGDetails', (Type) => closed(Type, {
  ...dagSummaryFields(Type),
  env: Type.Array(Type.String({ description: 'KEY=value' })),
  logDir: Type.String(),
  handlerOn: closed(Type, {
    init: Type.Optional(ref(Type, Step)),
    success: Type.Optional(ref(Type, Step)),
    failure: Type.Optional(ref(Type, Step)),
    cancel: Type.Optional(ref(Type, Step)),
    exit: Type.Optional(ref(Type, Step)),
  }),
  steps: Type.Array(ref(Type, Step)),
  delay: Type.Integer({ description: 'Seconds before the first step' }),
  histRetentionDays: Type.Integer(),
  preconditions: Type.Array(ref(Type, Condition)),
  maxActiveRuns: Type.Integer({ description: '-1: unlimited' }),
  maxActiveSteps: Type.Integer(),
  timeoutSec: Type.Integer({ description: '0: none' }),
  maxCleanUpTimeSec: Type.Integer(),
  type: Type.Enum(['chain', 'graph']),
  workingDir: Type.String(),
}));

/** What a DAG file that cannot be read as a DAG shows of itself. */
export const DagNameOnly = component('DAGNameOnly', (Type) => closed(Type, { name: Type.String() }, 'A DAG whose definition could not be read'));

const dagOrName = (Type: TypeBuilder) => Type.Union([ref(Type, DagDetails), ref(Type, DagNameOnly)]);

export const LocalDag = component('LocalDag', (Type) => closed(Type, {
  name: Type.String(),
  dag: dagOrName(Type),
  errors: Type.Array(Type.String()),
}, 'A DAG defined in the same file'));

export const MissedRun = component('MissedRun', (Type) => closed(Type, {
  kind: Type.Enum(['start', 'stop', 'restart']),
  scheduledAt: Type.String({ description: 'When it should have ticked (ISO 8601)' }),
  expression: Type.String({ description: 'The schedule expression, as written' }),
  noticedAt: Type.String({ description: 'When the server, starting again, found it missed (ISO 8601)' }),
}, 'A scheduled tick that fell while the server was not running (troupe)'));

const nextRun = (Type: TypeBuilder) => Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 UTC time of the next scheduled run; null when none (troupe)' });

export const Pagination = component('Pagination', (Type) => closed(Type, {
  totalRecords: Type.Integer({ minimum: 0 }),
  currentPage: Type.Integer({ minimum: 1 }),
  totalPages: Type.Integer({ minimum: 1 }),
  nextPage: Type.Union([Type.Integer(), Type.Null()]),
  prevPage: Type.Union([Type.Integer(), Type.Null()]),
}));

export const DagFile = component('DAGFile', (Type) => closed(Type, {
  fileName: Type.String(),
  dag: ref(Type, DagSummary),
  latestDAGRun: ref(Type, RunSummary),
  suspended: Type.Boolean(),
  nextRun: nextRun(Type),
  errors: Type.Array(Type.String()),
}));

export const LogChunk = component('Log', (Type) => closed(Type, {
  content: Type.String(),
  lineCount: Type.Integer({ minimum: 0, description: 'Lines returned' }),
  totalLines: Type.Integer({ minimum: 0 }),
  hasMore: Type.Boolean({ description: 'Whether lines follow' }),
  isEstimate: Type.Boolean({ description: 'Whether totalLines was estimated (a large file, or a read from byteOffset) rather than counted' }),
  nextOffset: Type.Integer({ minimum: 0, description: 'The byte of the log file just after the last whole line returned: the byteOffset to read on from' }),
}));

const queueEntryFields = (Type: TypeBuilder) => ({
  dagRunId: Type.String(),
  name: Type.String(),
  status: ref(Type, RunStatusCode),
  statusLabel: ref(Type, RunStatusLabel),
  startedAt: Type.String({ description: TIME }),
  finishedAt: Type.String({ description: TIME }),
  log: Type.String(),
});

export const Queue = component('Queue', (Type) => closed(Type, {
  name: Type.String({ description: 'The custom queue\'s name, or the DAG name of a dag-based one' }),
  type: Type.Enum(['custom', 'dag-based']),
  maxConcurrency: Type.Optional(Type.Integer({ minimum: 1, description: 'Custom queues only' })),
  summary: closed(Type, { running: Type.Integer({ minimum: 0 }), queued: Type.Integer({ minimum: 0 }), total: Type.Integer({ minimum: 0 }) }),
  runningDAGRuns: Type.Array(closed(Type, queueEntryFields(Type))),
  queuedDAGRuns: Type.Array(closed(Type, {
    ...queueEntryFields(Type),
    waitingFor: Type.Enum(['queue', 'maxActiveRuns', 'suspended', 'worker'], { description: 'What holds the run back (troupe): a worker is a worker carrying its workerSelector\'s labels, with room' }),
    workerSelector: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'The labels of the worker it waits for (waitingFor worker)' })),
  })),
  oldestQueuedAgeSec: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'How long the oldest queued run has waited; null when none waits (troupe)' }),
}));

export const Health = component('HealthResponse', (Type) => closed(Type, {
  status: Type.Enum(['healthy', 'unhealthy']),
  version: Type.String(),
  uptime: Type.Integer({ minimum: 0, description: 'Seconds since the server started' }),
  timestamp: Type.String(),
  error: Type.Optional(Type.String({ description: 'Only when unhealthy: why' })),
}));

export const MetricPoint = component('MetricPoint', (Type) => closed(Type, {
  timestamp: Type.Integer({ description: 'Unix seconds' }),
  value: Type.Number(),
}));

const series = (Type: TypeBuilder, description: string) => Type.Array(ref(Type, MetricPoint), { description });

export const ResourceHistory = component('ResourceHistory', (Type) => closed(Type, {
  cpu: series(Type, 'Percent of all CPUs busy since the previous sample'),
  memory: series(Type, 'Percent of memory in use'),
  disk: series(Type, 'Percent of the data directory\'s file system in use'),
  load: series(Type, 'The one-minute load average'),
}));

export const RunningTask = component('RunningTask', (Type) => closed(Type, {
  dagRunId: Type.String(),
  dagName: Type.String(),
  startedAt: Type.String({ description: 'RFC 3339 time the worker began the run' }),
  rootDagRunName: Type.Optional(Type.String()),
  rootDagRunId: Type.Optional(Type.String()),
  parentDagRunName: Type.Optional(Type.String()),
  parentDagRunId: Type.Optional(Type.String()),
}));

export const Worker = component('Worker', (Type) => closed(Type, {
  id: Type.String(),
  labels: Type.Record(Type.String(), Type.String(), { description: 'The labels a DAG\'s workerSelector is matched against' }),
  totalPollers: Type.Integer({ minimum: 0, description: 'How many runs the worker may run at once' }),
  busyPollers: Type.Integer({ minimum: 0, description: 'How many it runs now' }),
  runningTasks: Type.Array(ref(Type, RunningTask)),
  lastHeartbeatAt: Type.String({ description: 'RFC 3339 time of its last heartbeat' }),
  healthStatus: Type.Enum(['healthy', 'warning', 'unhealthy'], { description: 'From the heartbeat\'s age: under 5 s healthy, under 15 s warning' }),
}));

// The bodies of single routes.

const withErrors = (Type: TypeBuilder, properties: Parameters<TypeBuilder['Object']>[0]) =>
  closed(Type, { ...properties, errors: Type.Array(Type.String(), { description: 'Problems found, as `path (line N): message`' }) });

export const WorkersListResponse = bodySchema((Type) => closed(Type, {
  workers: Type.Array(ref(Type, Worker)),
  errors: Type.Array(Type.String(), { description: 'Problems met while asking the workers' }),
}));
export const DagRunIdResponse = bodySchema((Type) => closed(Type, { dagRunId: Type.String() }));
export const DagListResponse = bodySchema((Type) => withErrors(Type, { dags: Type.Array(ref(Type, DagFile)), pagination: ref(Type, Pagination) }));
export const CreatedDagResponse = bodySchema((Type) => closed(Type, { name: Type.String() }));
export const ValidateResponse = bodySchema((Type) => withErrors(Type, {
  valid: Type.Boolean(),
  dag: Type.Optional(ref(Type, DagDetails)),
}));
export const SearchResponse = bodySchema((Type) => withErrors(Type, {
  results: Type.Array(closed(Type, {
    name: Type.String({ description: 'The DAG file name' }),
    dag: ref(Type, DagSummary),
    matches: Type.Array(closed(Type, { line: Type.String(), lineNumber: Type.Integer({ minimum: 1 }), startLine: Type.Integer({ minimum: 1 }) })),
  })),
}));
export const TagsResponse = bodySchema((Type) => withErrors(Type, { tags: Type.Array(Type.String()) }));
export const DagDetailsResponse = bodySchema((Type) => withErrors(Type, {
  dag: dagOrName(Type),
  localDags: Type.Array(ref(Type, LocalDag)),
  latestDAGRun: ref(Type, RunDetails),
  suspended: Type.Boolean(),
  nextRun: nextRun(Type),
  missedRuns: Type.Array(ref(Type, MissedRun)),
}));
export const DagSpecResponse = bodySchema((Type) => withErrors(Type, { dag: dagOrName(Type), spec: Type.String({ description: 'The YAML definition' }) }));
export const ErrorsResponse = bodySchema((Type) => withErrors(Type, {}));
export const DagRunHistoryResponse = bodySchema((Type) => closed(Type, {
  dagRuns: Type.Array(ref(Type, RunDetails)),
  gridData: Type.Array(closed(Type, {
    name: Type.String({ description: 'Step name' }),
    history: Type.Array(ref(Type, NodeStatusCode), { description: 'The step\'s status in each listed run, in their order' }),
  })),
}));
export const DagRunResponse = bodySchema((Type) => closed(Type, { dagRun: ref(Type, RunDetails) }));
export const RunListResponse = bodySchema((Type) => closed(Type, {
  dagRuns: Type.Array(ref(Type, RunSummary)),
  nextCursor: Type.Optional(Type.String({ description: 'With `limit` (troupe): the `cursor` of the next page; absent on the last' })),
}));
export const RunDetailsResponse = bodySchema((Type) => closed(Type, {
  dagRun: ref(Type, RunDetails),
  dagRunDetails: ref(Type, RunDetails),
}, 'The same run under both keys: the specification names it dagRun and dagRunDetails'));
export const SubRunDetailsResponse = RunDetailsResponse;
export const RunSpecResponse = bodySchema((Type) => closed(Type, { spec: Type.String({ description: 'The YAML the run was started from' }) }));
export const OutputsResponse = bodySchema((Type) => closed(Type, {
  metadata: closed(Type, {
    dagName: Type.String(),
    dagRunId: Type.String(),
    attemptId: Type.String({ description: 'Differs per retry' }),
    status: Type.Enum(['succeeded', 'failed', 'aborted', ''], { description: 'Empty while the run is active' }),
    completedAt: Type.String({ description: TIME }),
    params: Type.String(),
  }),
  outputs: Type.Record(Type.String(), Type.String(), { description: 'Output key (camelCase) -> value, secrets masked' }),
}, 'The run outputs document'));
export const SubRunsResponse = bodySchema((Type) => closed(Type, {
  subRuns: Type.Array(closed(Type, {
    dagRunId: Type.String(),
    params: Type.String(),
    status: ref(Type, RunStatusCode),
    statusLabel: ref(Type, RunStatusLabel),
    startedAt: Type.String({ description: TIME }),
    finishedAt: Type.Union([Type.String(), Type.Null()], { description: `${TIME} (or null)` }),
  })),
}));
export const CleanupResponse = bodySchema((Type) => closed(Type, {
  dryRun: Type.Boolean(),
  dagRuns: Type.Array(closed(Type, { name: Type.String(), dagRunId: Type.String() }), {
    description: 'The root runs removed with their sub DAG runs and logs (on a dry run, those that would be), oldest first per DAG name',
  }),
  removed: Type.Integer({ description: 'How many runs went, sub DAG runs included; 0 on a dry run' }),
}));
export const RescheduleResponse = bodySchema((Type) => closed(Type, { dagRunId: Type.String(), queued: Type.Boolean({ description: 'Whether the new run waits in a queue' }) }));
export const QueuesResponse = bodySchema((Type) => closed(Type, { queues: Type.Array(ref(Type, Queue)) }));
export const QueueResponse = bodySchema((Type) => ref(Type, Queue));
export const HealthResponse = bodySchema((Type) => ref(Type, Health));
export const ResourceHistoryResponse = bodySchema((Type) => ref(Type, ResourceHistory));
export const LogResponse = bodySchema((Type) => ref(Type, LogChunk));
export const OpenApiResponse = bodySchema((Type) => Type.Object({ openapi: Type.String() }, { additionalProperties: true, description: 'This document' }));

// Accounts (docs/auth.md): never a password, hash or token version; an API key's secret only at creation.
export const UserRole = component('UserRole', (Type) => Type.Enum(['admin', 'manager', 'operator', 'viewer'], {
  description: 'admin: everything, users and API keys too; manager: DAG definitions and runs; operator: runs; viewer: reads',
}));
export const User = component('User', (Type) => closed(Type, {
  id: Type.String(),
  username: Type.String(),
  role: ref(Type, UserRole),
  createdAt: Type.String({ description: 'ISO 8601; empty for credentials that are not a stored user' }),
  updatedAt: Type.String({ description: 'ISO 8601; empty for credentials that are not a stored user' }),
}));
export const ApiKey = component('APIKey', (Type) => closed(Type, {
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  role: ref(Type, UserRole),
  keyPrefix: Type.String({ description: 'The key\'s first characters, to tell keys apart' }),
  createdBy: Type.String({ description: 'The id of the user who created it' }),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()], { description: 'Last authentication (written at most once a minute); null before' }),
}));
export const UserResponse = bodySchema((Type) => closed(Type, { user: ref(Type, User) }));
export const UsersResponse = bodySchema((Type) => closed(Type, { users: Type.Array(ref(Type, User)) }));
export const LoginResponse = bodySchema((Type) => closed(Type, {
  token: Type.String({ description: 'A session token: send it as `Authorization: Bearer <token>`' }),
  expiresAt: Type.String({ description: 'ISO 8601' }),
  user: ref(Type, User),
}));
export const SuccessResponse = bodySchema((Type) => closed(Type, { message: Type.String() }));
export const SignInMethodsResponse = bodySchema((Type) => closed(Type, {
  required: Type.Boolean({ description: 'Whether requests need credentials' }),
  password: Type.Boolean({ description: 'Whether POST /auth/login signs in stored users (auth mode builtin)' }),
  oidc: Type.Boolean({ description: 'Whether GET /auth/oidc/login signs in with an OIDC provider' }),
}));
export const ApiKeyResponse = bodySchema((Type) => closed(Type, { apiKey: ref(Type, ApiKey) }));
export const ApiKeysResponse = bodySchema((Type) => closed(Type, { apiKeys: Type.Array(ref(Type, ApiKey)) }));
export const CreatedApiKeyResponse = bodySchema((Type) => closed(Type, {
  apiKey: ref(Type, ApiKey),
  key: Type.String({ description: 'The whole key, shown this once: send it as `Authorization: Bearer <key>`' }),
}));

export type ResponseSchema = BodySchema<TSchema>;
