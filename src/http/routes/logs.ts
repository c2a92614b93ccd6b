// Run and step logs as chunks of lines (byteOffset > tail > head > offset+limit, docs/api.md).
import { AppError, MAX_LOG_LINES, NodeStatus, isFinalRunStatus, stepNodeOf, type LogChunk, type LogQuery } from '../../core/index.ts';
import type { Router } from '../router.ts';
import { enumQuery, intQuery } from '../query.ts';
import { LogResponse } from '../response-schemas.ts';
import { json, type ApiDeps, type HttpRequest } from '../types.ts';
import { runOf } from './dag-runs.ts';


const LinesQuery = {
  tail: intQuery('tail', 'The last lines (0: not given); wins over head and offset', 0),
  head: intQuery('head', 'The first lines (0: not given); wins over offset', 0),
  offset: intQuery('offset', '1-based line to start from', 1),
  limit: intQuery('limit', `Lines from offset or byteOffset, default 1000; more than ${MAX_LOG_LINES} reads ${MAX_LOG_LINES}`, 1),
  byteOffset: intQuery('byteOffset', 'The whole lines that start at or after this byte of the log file (a previous answer\'s nextOffset); wins over tail, head and offset', 0),
};
const StreamQuery = enumQuery('stream', 'stdout (the default) or stderr', ['stdout', 'stderr']);

/** `ended`: the file will not grow, so a last line without its newline is whole. */
function logQuery(request: HttpRequest, ended: boolean): LogQuery {
  // tail=0 and head=0 mean "not given", as Dagu treats them; limits above the maximum are capped.
  return {
    tail: LinesQuery.tail.read(request.query) || undefined,
    head: LinesQuery.head.read(request.query) || undefined,
    offset: LinesQuery.offset.read(request.query),
    limit: Math.min(LinesQuery.limit.read(request.query) ?? 1000, MAX_LOG_LINES),
    byteOffset: LinesQuery.byteOffset.read(request.query),
    ended,
  };
}

async function chunk(deps: ApiDeps, path: string, query: LogQuery): Promise<LogChunk> {
  const read = await deps.logs.read(path, query);
  return read ?? { content: '', lineCount: 0, totalLines: 0, hasMore: false, isEstimate: false, nextOffset: 0 };
}

async function runLog(request: HttpRequest, deps: ApiDeps) {
  const record = runOf(request, deps);
  return json(await chunk(deps, record.log, logQuery(request, isFinalRunStatus(record.status))));
}

async function stepLog(request: HttpRequest, deps: ApiDeps) {
  const record = runOf(request, deps);
  const { stepName } = request.params;
  const node = stepNodeOf(record, stepName);
  if (!node) throw new AppError('not_found', `step ${stepName} not found in DAG ${record.name}`);
  const stream = StreamQuery.read(request.query) ?? 'stdout';
  // The path comes from the run record, never from the request.
  // A node that is not running (ended, or never started: no file) writes no more; retries and repeats keep it running.
  const ended = node.status !== NodeStatus.Running || isFinalRunStatus(record.status);
  return json(await chunk(deps, stream === 'stdout' ? node.stdout : node.stderr, logQuery(request, ended)));
}

export function logRoutes(router: Router): void {
  const lines = Object.values(LinesQuery);
  const chunk200 = { 200: { description: 'The lines asked for (an empty chunk before the log is written)', body: LogResponse } };
  router
    .add('GET', '/dag-runs/:name/:dagRunId/log', runLog, { permission: 'read',
      operationId: 'getDAGRunLog', summary: 'Lines of a run\'s log', tag: 'dag-runs',
      query: lines, responses: chunk200, errors: ['bad_request', 'not_found'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId/steps/:stepName/log', stepLog, { permission: 'read',
      operationId: 'getDAGRunStepLog', summary: 'Lines of a step\'s stdout or stderr', tag: 'dag-runs',
      query: [StreamQuery, ...lines], responses: chunk200, errors: ['bad_request', 'not_found'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId/log', runLog, { permission: 'read',
      operationId: 'getSubDAGRunLog', summary: 'Lines of a sub DAG run\'s log', tag: 'dag-runs',
      query: lines, responses: chunk200, errors: ['bad_request', 'not_found'],
    })
    .add('GET', '/dag-runs/:name/:dagRunId/sub-dag-runs/:subDagRunId/steps/:stepName/log', stepLog, { permission: 'read',
      operationId: 'getSubDAGRunStepLog', summary: 'Lines of a sub DAG run step\'s stdout or stderr', tag: 'dag-runs',
      query: [StreamQuery, ...lines], responses: chunk200, errors: ['bad_request', 'not_found'],
    });
}
