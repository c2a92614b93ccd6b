// /dags/{fileName}/start and /dag-runs: starting, listing, reading and stopping runs.
import { AppError, isRunStatus, runStatusLabel, type RunFilter, type RunRecord, type RunStore } from '../../core/index.ts';
import type { Router } from '../router.ts';
import { outputsDocument, runDetailsDocument, runSummary } from '../present.ts';
import { intQuery, stringQuery } from '../query.ts';
import {
  CleanupResponse, DagRunIdResponse, OutputsResponse, RunDetailsResponse, RunListResponse, RunSpecResponse, SubRunDetailsResponse, SubRunsResponse,
} from '../response-schemas.ts';
import { CleanupBody, InlineRunBody, RetryBody, StartBody, StepStatusBody, parseBody } from '../schemas.ts';
import { callerTrace, empty, json, type ApiDeps, type HttpRequest } from '../types.ts';
import { errorResponse, statusOverrides } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../run-cursor.ts';
import { ListCache } from '../list-cache.ts';
import { runDetailsAnswer } from '../stored-details.ts';

/** The largest page of `GET /dag-runs?limit=`: Dagu's own cap, so that its clients' pages are accepted. */
const MAX_RUNS_PER_PAGE = 1000;

async function startDag(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(StartBody, request.body);
  const { dagRunId } = await deps.engine.startDag(request.params.fileName, { ...body, ...callerTrace(request) });
  return json({ dagRunId });
}

async function startInline(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(InlineRunBody, request.body);
  if (body.spec === undefined || body.spec.trim() === '') throw new AppError('bad_request', 'spec is required');
  const { dagRunId } = await deps.engine.startInline({ ...body, spec: body.spec, ...callerTrace(request) });
  return json({ dagRunId });
}

const FilterQuery = {
  status: intQuery('status', 'Only runs of this status (0 to 6)', 0, 6),
  fromDate: intQuery('fromDate', 'Only runs created at or after this Unix time (seconds)', 0),
  toDate: intQuery('toDate', 'Only runs created up to this Unix time (seconds, the whole second included)', 0),
  dagRunId: stringQuery('dagRunId', 'Only the run with this id'),
};
const NameQuery = stringQuery('name', 'Only runs of this DAG name');
/** troupe (docs/api.md, Paging through runs): without `limit` the answer is every match, as the spec says. */
const PageQuery = {
  limit: intQuery('limit', `At most this many runs, and \`nextCursor\` while more match (troupe; 1 to ${MAX_RUNS_PER_PAGE})`, 1, MAX_RUNS_PER_PAGE),
  cursor: stringQuery('cursor', 'The `nextCursor` of the previous page (troupe; with `limit`)'),
};

function runFilter(request: HttpRequest): RunFilter {
  const status = FilterQuery.status.read(request.query);
  const from = FilterQuery.fromDate.read(request.query);
  const to = FilterQuery.toDate.read(request.query);
  const filter: RunFilter = {};
  if (status !== undefined && isRunStatus(status)) filter.status = status;
  if (from !== undefined) filter.fromMs = from * 1000;
  // toDate is a whole second: every run created within it is included.
  if (to !== undefined) filter.toMs = to * 1000 + 999;
  const dagRunId = FilterQuery.dagRunId.read(request.query);
  if (dagRunId !== undefined) filter.dagRunId = dagRunId;
  return filter;
}

function listRuns(request: HttpRequest, deps: ApiDeps) {
  const filter = runFilter(request);
  const name = NameQuery.read(request.query);
  if (name !== undefined) filter.name = name;
  return runList(request, deps, filter);
}

function listRunsOfName(request: HttpRequest, deps: ApiDeps) {
  return runList(request, deps, { ...runFilter(request), name: request.params.name });
}

/**
 * Every match, as the spec says; with `limit` (troupe), a page of at most that many and the
 * `nextCursor` of the next page while more follow (docs/api.md, Paging through runs).
 */
function runList(request: HttpRequest, deps: ApiDeps, filter: RunFilter) {
  const limit = PageQuery.limit.read(request.query);
  const cursor = PageQuery.cursor.read(request.query);
  if (limit === undefined && cursor !== undefined) throw new AppError('bad_request', 'cursor is given without limit');
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  if (cursor !== undefined && after === undefined) throw new AppError('bad_request', 'cursor is not one a previous answer gave');
  let cache = listCaches.get(deps.runs);
  if (!cache) listCaches.set(deps.runs, cache = new ListCache());
  const body = cache.body(deps.runs.runsGeneration, `${request.path}?${request.query.toString()}`, () => {
    if (limit === undefined) return { dagRuns: deps.runs.summaries(filter).runs.map(runSummary) };
    const page = deps.runs.summaries(filter, { limit, after });
    return { dagRuns: page.runs.map(runSummary), ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) };
  });
  return { status: 200, headers: { 'content-type': 'application/json' }, body };
}

/** Listings by store: a process may serve several homes (tests, embedders). */
const listCaches = new WeakMap<RunStore, ListCache>();

/** The spec's reference names the key dagRun, its example dagRunDetails: both are sent (docs/api.md). */
const DETAILS_KEYS = ['dagRun', 'dagRunDetails'];

/** A run's details, as bytes kept per record (present.ts): a large run is encoded a block of nodes at a time. */
export async function detailsResponse(record: RunRecord, keys: readonly string[] = DETAILS_KEYS) {
  return { status: 200, headers: { 'content-type': 'application/json' }, body: await runDetailsDocument(record, keys) };
}

/** A run's details by name and id (`latest` allowed): a large run the store does not hold is read on the run-details thread (stored-details.ts). */
export async function storedRunResponse(deps: ApiDeps, name: string, dagRunId: string, keys: readonly string[] = DETAILS_KEYS) {
  return { status: 200, headers: { 'content-type': 'application/json' }, body: await runDetailsAnswer(deps, name, dagRunId, keys) };
}

async function getRun(request: HttpRequest, deps: ApiDeps) {
  return storedRunResponse(deps, request.params.name, request.params.dagRunId);
}

async function stopRun(request: HttpRequest, deps: ApiDeps) {
  await deps.engine.stop(request.params.name, request.params.dagRunId);
  return empty(200);
}

/** troupe: old history removed by hand, as `troupe cleanup` does on a home with no server. */
async function cleanupRuns(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(CleanupBody, request.body);
  const dryRun = body.dryRun === true;
  return json({ dryRun, ...(await deps.retention.cleanup({ name: body.name, retentionDays: body.retentionDays, dryRun })) });
}

/** The outputs document: `latest` allowed; a run without outputs has `outputs: {}`. */
function getRunOutputs(request: HttpRequest, deps: ApiDeps) {
  return json(outputsDocument(deps.engine.findRun(request.params.name, request.params.dagRunId)));
}

async function retryRun(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(RetryBody, request.body);
  try {
    await deps.engine.retry(request.params.name, request.params.dagRunId, body);
  } catch (error) {
    return errorResponse(error, statusOverrides.retry);
  }
  return empty(200);
}

async function setStepStatus(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(StepStatusBody, request.body);
  await deps.engine.setStepStatus(runOf(request, deps), request.params.stepName, body.status);
  return empty(200);
}

/** The run a request names: a sub DAG run under `subDagRunId` when the path has one. */
export function runOf(request: HttpRequest, deps: ApiDeps): RunRecord {
  const { name, dagRunId, subDagRunId } = request.params;
  return subDagRunId === undefined ? deps.engine.findRun(name, dagRunId) : deps.engine.findSubRun(name, dagRunId, subDagRunId);
}

/** The sub runs a run started, with their timing. */
function listSubRuns(request: HttpRequest, deps: ApiDeps) {
  const parent = deps.engine.findRun(request.params.name, request.params.dagRunId);
  const paramsOf = new Map(parent.nodes.flatMap((node) => [...node.subRuns, ...node.subRunsRepeated]).map((sub) => [sub.dagRunId, sub.params]));
  return json({
    subRuns: deps.engine.subRuns(parent.name, parent.dagRunId).map((child) => ({
      dagRunId: child.dagRunId, params: paramsOf.get(child.dagRunId) ?? '', status: child.status, statusLabel: runStatusLabel(child.status),
      startedAt: child.startedAt, finishedAt: child.finishedAt,
    })),
  });
}

function getSubRun(request: HttpRequest, deps: ApiDeps) {
  // Both keys, as for a run's details (docs/api.md).
  return detailsResponse(runOf(request, deps));
}

function getRunSpec(request: HttpRequest, deps: ApiDeps) {
  const record = deps.engine.findRun(request.params.name, request.params.dagRunId);
  const spec = deps.runs.getSpec(record.name, record.dagRunId);
  if (spec === undefined) throw new AppError('not_found', `no spec stored for dag-run ${record.dagRunId}`);
  return json({ spec });
}

export function dagRunRoutes(router: Router): void {
  const empty200 = { 200: { description: 'Done; no body' } };
  router
    .add('POST', '/dags/:fileName/start', startDag, { permission: 'run', idempotent: true,
      operationId: 'executeDAG', summary: 'Start a run of a stored DAG', tag: 'dag-runs',
      body: StartBody,
      responses: { 200: { description: 'Started', body: DagRunIdResponse } },
      errors: ['bad_request', 'not_found', 'already_running', 'max_run_reached', 'already_exists', 'insufficient_storage'],
    })
    .add('GET', '/dag-runs', listRuns, { permission: 'read',
      operationId: 'listDAGRuns', summary: 'Every run that matches (sub DAG runs left out), newest first', tag: 'dag-runs',
      query: [NameQuery, ...Object.values(FilterQuery), ...Object.values(PageQuery)],
      responses: { 200: { description: 'The runs', body: RunListResponse } },
      errors: ['bad_request'],
    })
    .add('POST', '/dag-runs', startInline, { permission: 'write', idempotent: true,
      operationId: 'executeDAGRunFromSpec', summary: 'Run an inline spec', tag: 'dag-runs',
      body: InlineRunBody,
      responses: { 200: { description: 'Started', body: DagRunIdResponse } },
      errors: ['bad_request', 'max_run_reached', 'already_exists', 'insufficient_storage'],
    })
    .add('POST', '/dag-runs/cleanup', cleanupRuns, { permission: 'write',
      operationId: 'cleanupDAGRuns', summary: 'Remove finished runs older than a retention, with their sub DAG runs and logs (troupe)', tag: 'dag-runs',
      description: 'A run queued or active, or with a sub DAG run active, is kept. `retentionDays: 0` removes every finished run; ' +
        '`dryRun` only answers what would go.',
      body: CleanupBody,
      responses: { 200: { description: 'What went (or would go)', body: CleanupResponse } },
      errors: ['bad_request', 'insufficient_storage'],
    })
    .add('GET', '/dag-runs/:name', listRunsOfName, { permission: 'read',
      operationId: 'listDAGRunsByName', summary: 'The runs of a DAG name that match', tag: 'dag-runs',
      query: [...Object.values(FilterQuery), ...Object.values(PageQuery)],
      responses: { 200: { description: 'The runs', body: RunListResponse } },
      errors: ['bad_request'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId', getRun, { permission: 'read',
      operationId: 'getDAGRunDetails', summary: 'A run with its nodes', tag: 'dag-runs',
      responses: { 200: { description: 'The run', body: RunDetailsResponse } },
      errors: ['not_found'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId/spec', getRunSpec, { permission: 'read',
      operationId: 'getDAGRunSpec', summary: 'The YAML a run was started from', tag: 'dag-runs',
      responses: { 200: { description: 'The spec', body: RunSpecResponse } },
      errors: ['not_found'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId/outputs', getRunOutputs, { permission: 'read',
      operationId: 'getDAGRunOutputs', summary: 'The outputs a run collected', tag: 'dag-runs',
      responses: { 200: { description: 'The outputs document (`outputs: {}` when there are none)', body: OutputsResponse } },
      errors: ['not_found'],
    })
    .add('POST', '/dag-runs/:name/:dagRunId/stop', stopRun, { permission: 'run',
      operationId: 'terminateDAGRun', summary: 'Stop a running run', tag: 'dag-runs',
      description: 'Answers once the stop is sent; the run is aborted when its steps have exited.',
      responses: empty200,
      errors: ['not_found', 'not_running'],
    })
    .add('POST', '/dag-runs/:name/:dagRunId/retry', retryRun, { permission: 'run',
      operationId: 'retryDAGRun', summary: 'Run a finished run again', tag: 'dag-runs',
      description: 'Without dagRunId (or with the same), a new attempt of the run; with another, a new run under that id. ' +
        '`stepName` runs that step alone.',
      body: RetryBody,
      responses: empty200,
      errors: ['bad_request', 'not_found', 'already_running', 'already_exists', 'max_run_reached', 'insufficient_storage'],
      statusOverrides: statusOverrides.retry,
    })
    .add('PATCH', '/dag-runs/:name/:dagRunId/steps/:stepName/status', setStepStatus, { permission: 'run',
      operationId: 'updateDAGRunStepStatus', summary: 'Set a node\'s status by hand (0 to 5) on a run that is not active', tag: 'dag-runs',
      body: StepStatusBody,
      responses: empty200,
      errors: ['bad_request', 'not_found', 'insufficient_storage'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs', listSubRuns, { permission: 'read',
      operationId: 'getSubDAGRuns', summary: 'The sub DAG runs a run started, with their timing', tag: 'dag-runs',
      responses: { 200: { description: 'The sub DAG runs', body: SubRunsResponse } },
      errors: ['not_found'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId', getSubRun, { permission: 'read',
      operationId: 'getSubDAGRunDetails', summary: 'A sub DAG run with its nodes', tag: 'dag-runs',
      responses: { 200: { description: 'The sub DAG run', body: SubRunDetailsResponse } },
      errors: ['not_found'],
    })
    .add('PATCH', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId/steps/:stepName/status', setStepStatus, { permission: 'run',
      operationId: 'updateSubDAGRunStepStatus', summary: 'Set a sub DAG run node\'s status by hand (0 to 5)', tag: 'dag-runs',
      body: StepStatusBody,
      responses: empty200,
      errors: ['bad_request', 'not_found', 'insufficient_storage'],
    });
}
