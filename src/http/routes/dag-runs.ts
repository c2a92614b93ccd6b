// /dags/{fileName}/start and /dag-runs: starting, listing, reading and stopping runs.
import { AppError, isRunStatus, runStatusLabel, type RunFilter, type RunRecord, type RunStore } from '../../core/index.ts';
import type { Router } from '../router.ts';
import { outputsDocument, runDetails, runDetailsParts, runSummary } from '../present.ts';
import { intParam, stringParam } from '../query.ts';
import { InlineRunBody, RetryBody, StartBody, StepStatusBody, parseBody } from '../schemas.ts';
import { empty, json, type ApiDeps, type HttpRequest } from '../types.ts';
import { errorResponse, statusOverrides } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../run-cursor.ts';
import { ListCache } from '../list-cache.ts';

/** The largest page of `GET /dag-runs?limit=`. */
const MAX_RUNS_PER_PAGE = 500;

async function startDag(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(StartBody, request.body);
  return json(await deps.engine.startDag(request.params.fileName, body));
}

async function startInline(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(InlineRunBody, request.body);
  if (body.spec === undefined || body.spec.trim() === '') throw new AppError('bad_request', 'spec is required');
  return json(await deps.engine.startInline({ ...body, spec: body.spec }));
}

function runFilter(request: HttpRequest): RunFilter {
  const status = intParam(request.query, 'status', 0, 6);
  const from = intParam(request.query, 'fromDate', 0);
  const to = intParam(request.query, 'toDate', 0);
  const filter: RunFilter = {};
  if (status !== undefined && isRunStatus(status)) filter.status = status;
  if (from !== undefined) filter.fromMs = from * 1000;
  // toDate is a whole second: every run created within it is included.
  if (to !== undefined) filter.toMs = to * 1000 + 999;
  const dagRunId = stringParam(request.query, 'dagRunId');
  if (dagRunId !== undefined) filter.dagRunId = dagRunId;
  return filter;
}

function listRuns(request: HttpRequest, deps: ApiDeps) {
  const filter = runFilter(request);
  const name = stringParam(request.query, 'name');
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
  const limit = intParam(request.query, 'limit', 1, MAX_RUNS_PER_PAGE);
  const cursor = request.query.get('cursor');
  if (limit === undefined && cursor !== null) throw new AppError('bad_request', 'cursor is given without limit');
  const after = cursor === null ? undefined : decodeCursor(cursor);
  if (cursor !== null && after === undefined) throw new AppError('bad_request', 'cursor is not one a previous answer gave');
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

const DAG_RUN_KEY = Buffer.from('{"dagRun":');
const DETAILS_KEY = Buffer.from(',"dagRunDetails":');
const CLOSE = Buffer.from('}');

/** Rendered bodies by record: a record object is never changed, a new write is a new object. */
const renderedRuns = new WeakMap<RunRecord, Buffer>();

function getRun(request: HttpRequest, deps: ApiDeps) {
  const record = deps.engine.findRun(request.params.name, request.params.dagRunId);
  let body = renderedRuns.get(record);
  if (body === undefined) {
    const details = runDetailsParts(record);
    // The spec's reference names the key dagRun, its example dagRunDetails: both are sent (docs/api.md).
    body = Buffer.concat([DAG_RUN_KEY, ...details, DETAILS_KEY, ...details, CLOSE]);
    renderedRuns.set(record, body);
  }
  return { status: 200, headers: { 'content-type': 'application/json' }, body };
}

async function stopRun(request: HttpRequest, deps: ApiDeps) {
  await deps.engine.stop(request.params.name, request.params.dagRunId);
  return empty(200);
}

/** The outputs document (API 2.11): `latest` allowed; a run without outputs has `outputs: {}`. */
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

/** The sub runs a run started, with their timing (API 4.8). */
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
  return json({ dagRunDetails: runDetails(runOf(request, deps)) });
}

function getRunSpec(request: HttpRequest, deps: ApiDeps) {
  const record = deps.engine.findRun(request.params.name, request.params.dagRunId);
  const spec = deps.runs.getSpec(record.name, record.dagRunId);
  if (spec === undefined) throw new AppError('not_found', `no spec stored for dag-run ${record.dagRunId}`);
  return json({ spec });
}

export function dagRunRoutes(router: Router): void {
  router
    .add('POST', '/dags/:fileName/start', startDag)
    .add('GET', '/dag-runs', listRuns)
    .add('POST', '/dag-runs', startInline)
    .add('GET', '/dag-runs/:name', listRunsOfName)
    .add('GET', '/dag-runs/:name/:dagRunId', getRun)
    .add('GET', '/dag-runs/:name/:dagRunId/spec', getRunSpec)
    .add('GET', '/dag-runs/:name/:dagRunId/outputs', getRunOutputs)
    .add('POST', '/dag-runs/:name/:dagRunId/stop', stopRun)
    .add('POST', '/dag-runs/:name/:dagRunId/retry', retryRun)
    .add('PATCH', '/dag-runs/:name/:dagRunId/steps/:stepName/status', setStepStatus)
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs', listSubRuns)
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId', getSubRun)
    .add('PATCH', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId/steps/:stepName/status', setStepStatus);
}
