// Start and wait: a run of a stored DAG, answered once it has ended (or when the caller's timeout
// passes first: 408, and the run goes on). The wait is woken by the run's final event.
import { AppError, isFinalRunStatus } from '../../core/index.ts';
import { detailsResponse } from './dag-runs.ts';
import { DagRunResponse } from '../response-schemas.ts';
import { StartSyncBody, parseBody } from '../schemas.ts';
import type { Router } from '../router.ts';
import { callerTrace, type ApiDeps, type HttpRequest, type HttpResponse } from '../types.ts';

async function startSync(request: HttpRequest, deps: ApiDeps): Promise<HttpResponse> {
  const { timeout, ...options } = await parseBody(StartSyncBody, request.body);
  const { dagRunId, name } = await deps.engine.startDag(request.params.fileName, { ...options, ...callerTrace(request) });
  const timer = new AbortController();
  const timeoutAt = setTimeout(() => timer.abort(), timeout * 1000);
  try {
    const isFinal = () => {
      const record = deps.runs.get(name, dagRunId);
      return record !== undefined && isFinalRunStatus(record.status);
    };
    if (!(await deps.eventHub.runEnds.wait(name, dagRunId, isFinal, timer.signal))) {
      throw new AppError('request_timeout', `dag-run ${dagRunId} of DAG ${name} did not end within ${timeout} seconds; it goes on`, { dagRunId });
    }
  } finally {
    clearTimeout(timeoutAt);
  }
  return detailsResponse(deps.engine.findRun(name, dagRunId), ['dagRun']);
}

export function startSyncRoutes(router: Router): void {
  router.add('POST', '/dags/:fileName/start-sync', startSync, { permission: 'run', idempotent: true,
    operationId: 'executeDAGSync', summary: 'Start a run of a stored DAG and answer once it has ended', tag: 'dag-runs',
    description: 'The body of `start`, plus `timeout` in seconds. 200 with the run\'s details once it has ended, whatever its status; '
      + '408 (`request_timeout`, `details.dagRunId`) when the timeout passes first: the run goes on.',
    body: StartSyncBody,
    responses: { 200: { description: 'The run has ended: its details', body: DagRunResponse } },
    errors: ['bad_request', 'not_found', 'already_running', 'max_run_reached', 'already_exists', 'insufficient_storage', 'request_timeout'],
  });
}
