// Run and step logs as chunks of lines (tail > head > offset+limit, docs/api.md).
import { AppError, HANDLER_NODE_NAMES, MAX_LOG_LINES, type HandlerNodeName, type LogQuery } from '../../core/index.ts';
import type { Router } from '../router.ts';
import { intParam, stringParam } from '../query.ts';
import { json, type ApiDeps, type HttpRequest } from '../types.ts';
import { runOf } from './dag-runs.ts';

const HANDLER_NODE_NAMES_SET: ReadonlySet<string> = new Set(Object.values(HANDLER_NODE_NAMES));

function logQuery(request: HttpRequest): LogQuery {
  // tail=0 and head=0 mean "not given", as Dagu treats them; limits above the maximum are capped.
  return {
    tail: intParam(request.query, 'tail', 0) || undefined,
    head: intParam(request.query, 'head', 0) || undefined,
    offset: intParam(request.query, 'offset', 1),
    limit: Math.min(intParam(request.query, 'limit', 1) ?? 1000, MAX_LOG_LINES),
  };
}

async function chunk(deps: ApiDeps, path: string, query: LogQuery) {
  const read = await deps.logs.read(path, query);
  return read ?? { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false };
}

async function runLog(request: HttpRequest, deps: ApiDeps) {
  const record = runOf(request, deps);
  return json(await chunk(deps, record.log, logQuery(request)));
}

async function stepLog(request: HttpRequest, deps: ApiDeps) {
  const record = runOf(request, deps);
  const { stepName } = request.params;
  // A handler's node is found by its node name too (onInit, onSuccess, onFailure, onCancel, onExit).
  const handler = HANDLER_NODE_NAMES_SET.has(stepName) ? record.handlers?.[stepName as HandlerNodeName] : undefined;
  const node = record.nodes.find((candidate) => candidate.step.name === stepName) ?? handler;
  if (!node) throw new AppError('not_found', `step ${stepName} not found in DAG ${record.name}`);
  const stream = stringParam(request.query, 'stream') ?? 'stdout';
  if (stream !== 'stdout' && stream !== 'stderr') throw new AppError('bad_request', 'stream must be stdout or stderr');
  // The path comes from the run record, never from the request.
  return json(await chunk(deps, stream === 'stdout' ? node.stdout : node.stderr, logQuery(request)));
}

export function logRoutes(router: Router): void {
  router
    .add('GET', '/dag-runs/:name/:dagRunId/log', runLog)
    .add('GET', '/dag-runs/:name/:dagRunId/steps/:stepName/log', stepLog)
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId/log', runLog)
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId/steps/:stepName/log', stepLog);
}
