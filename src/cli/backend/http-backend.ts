// The verbs over HTTP, to the server that owns the home (or the one --server names): undici, a
// Bearer token when one is given, the API's error document turned back into an AppError.
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { AppError, isFinalRunStatus, type ErrorCode } from '../../core/index.ts';
import { CliError } from '../errors.ts';
import { SseParser } from './sse-parser.ts';
import { LOG_PAGE_LINES, type Backend, type CleanupView, type DagRef, type FollowLogOptions, type LogPage, type LogPageQuery, type RunOptions, type RunView, type StepLogEnd } from './types.ts';

/** How often a watched run's details are read from a server without the event stream. */
const POLL_MS = 200;
/** Reads of a run just started that may find nothing (its first write not committed yet) before it is taken as missing. */
const MISSING_READS = 50;
/** A log stream that broke off is asked again from its last line, this many times in a row at most, this long apart. */
const STREAM_ATTEMPTS = 5;
const STREAM_RETRY_MS = 500;

export class HttpBackend implements Backend {
  readonly kind = 'server';

  constructor(readonly url: string, private readonly token?: string) {}

  async start(dag: DagRef, options: RunOptions): Promise<{ dagRunId: string }> {
    const body = { params: options.params, dagRunId: options.dagRunId, dagName: options.dagName };
    if (dag.kind === 'stored') return this.call('POST', `/dags/${encodeURIComponent(dag.fileName)}/start`, body);
    return this.call('POST', '/dag-runs', { ...body, dagName: undefined, spec: dag.spec, name: options.dagName ?? dag.name });
  }

  async enqueue(dag: DagRef, options: RunOptions): Promise<{ dagRunId: string }> {
    const body = { params: options.params, dagRunId: options.dagRunId, dagName: options.dagName, queue: options.queue };
    if (dag.kind === 'stored') return this.call('POST', `/dags/${encodeURIComponent(dag.fileName)}/enqueue`, body);
    return this.call('POST', '/dag-runs/enqueue', { ...body, dagName: undefined, spec: dag.spec, name: options.dagName ?? dag.name });
  }

  startSpec(spec: string, options: RunOptions & { name: string }): Promise<{ dagRunId: string }> {
    return this.call('POST', '/dag-runs', { spec, name: options.name, params: options.params, dagRunId: options.dagRunId });
  }

  async dequeue(name: string, dagRunId: string): Promise<void> {
    await this.call('GET', `${runPath(name, dagRunId)}/dequeue`);
  }

  async run(name: string, dagRunId: string): Promise<RunView> {
    return viewOf((await this.call<{ dagRun: RunView }>('GET', runPath(name, dagRunId))).dagRun);
  }

  async runs(name?: string, filter: { status?: number; limit?: number } = {}): Promise<RunView[]> {
    const query = new URLSearchParams();
    if (filter.status !== undefined) query.set('status', String(filter.status));
    if (filter.limit !== undefined) query.set('limit', String(filter.limit));
    const path = `${name === undefined ? '/dag-runs' : `/dag-runs/${encodeURIComponent(name)}`}${query.size > 0 ? `?${query}` : ''}`;
    return (await this.call<{ dagRuns: RunView[] }>('GET', path)).dagRuns.map(viewOf);
  }

  async stop(name: string, dagRunId: string): Promise<void> {
    await this.call('POST', `${runPath(name, dagRunId)}/stop`, {});
  }

  async retry(name: string, dagRunId: string, options: { stepName?: string }): Promise<void> {
    await this.call('POST', `${runPath(name, dagRunId)}/retry`, { dagRunId, stepName: options.stepName });
  }

  reschedule(name: string, dagRunId: string, options: { dagRunId?: string }): Promise<{ dagRunId: string; queued: boolean }> {
    return this.call('POST', `${runPath(name, dagRunId)}/reschedule`, { dagRunId: options.dagRunId });
  }

  async stepLogPage(name: string, dagRunId: string, stepName: string, stream: 'stdout' | 'stderr', which: LogPageQuery): Promise<LogPage> {
    const query = new URLSearchParams({ stream, limit: String(LOG_PAGE_LINES), ...('tail' in which ? { tail: String(which.tail) } : { byteOffset: String(which.byteOffset) }) });
    const page = await this.call<LogPage>('GET', `${runPath(name, dagRunId)}/steps/${encodeURIComponent(stepName)}/log?${query}`);
    // A server older than the byte offsets answers the first lines again and again, without saying where they end.
    if (typeof page.nextOffset !== 'number') throw new CliError(`the server at ${this.url} cannot follow a step's output by bytes`, 'upgrade the server to this troupe\'s version');
    return page;
  }

  /** Through the log stream route; a connection that breaks off is resumed from the last line read. */
  async followStepLog(name: string, dagRunId: string, stepName: string, stream: 'stdout' | 'stderr', onLine: (line: string) => void,
    options: FollowLogOptions = {}): Promise<StepLogEnd> {
    let from = options.from ?? 0;
    for (let attempts = 1; ; attempts++) {
      const query = new URLSearchParams({ stream, byteOffset: String(from), ...(options.onPartial ? { partial: 'true' } : {}) });
      const path = `${runPath(name, dagRunId)}/steps/${encodeURIComponent(stepName)}/log/stream?${query}`;
      let response: Awaited<ReturnType<typeof request>> | undefined;
      try {
        response = await request(`${this.url}${path}`, { method: 'GET', headers: this.headers('text/event-stream'), signal: options.signal });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        if (attempts >= STREAM_ATTEMPTS) throw this.unreachable(error);
      }
      if (response) {
        if (response.statusCode !== 200) throw apiError(response.statusCode, await response.body.text(), this.url);
        const parser = new SseParser();
        const decoder = new TextDecoder();
        try {
          for await (const chunk of response.body) {
            for (const message of parser.push(decoder.decode(chunk as Buffer, { stream: true }))) {
              if (message.event === 'end') {
                response.body.destroy();
                return JSON.parse(message.data) as StepLogEnd;
              }
              if (message.event === 'error') throw new CliError(`the server could not read the log of step ${stepName}`, 'see the server\'s log');
              if (message.event === 'partial') options.onPartial?.(message.data);
              if (message.event !== 'message') continue;
              onLine(message.data);
              if (message.id !== undefined) from = Number(message.id);
              attempts = 0;
            }
          }
        } catch (error) {
          if (error instanceof CliError || options.signal?.aborted) throw error;
          // The connection broke off: asked again from the last line read.
        }
        if (attempts >= STREAM_ATTEMPTS) throw new CliError(`the log stream of step ${stepName} broke off`, 'see `troupe logs`');
      }
      await sleep(STREAM_RETRY_MS, undefined, { signal: options.signal });
    }
  }

  cleanup(name: string, options: { retentionDays: number; dryRun: boolean }): Promise<CleanupView> {
    return this.call('POST', '/dag-runs/cleanup', { name, ...options });
  }

  /**
   * The run's details, read again each time the event stream tells of a change of the run (a
   * reconnect resumes after the last event seen), until they show its end. A server without the
   * event stream is polled instead.
   */
  async watch(name: string, dagRunId: string, onChange: (run: RunView) => void, options: { previousEnd?: string } = {}): Promise<RunView> {
    let seen = '';
    let missing = 0;
    /** The run as it stands; its end, when it has ended (and it is not the end a retry followed). */
    const look = async (): Promise<RunView | undefined> => {
      let run: RunView;
      try {
        run = await this.run(name, dagRunId);
      } catch (error) {
        // Started but not committed to the store yet: asked again, a while.
        if (!(error instanceof AppError && error.code === 'not_found') || ++missing >= MISSING_READS) throw error;
        return undefined;
      }
      const text = JSON.stringify(run);
      if (text !== seen) {
        seen = text;
        onChange(run);
      }
      return isFinalRunStatus(run.status as 0) && run.finishedAt !== options.previousEnd ? run : undefined;
    };
    const query = new URLSearchParams({ dagName: name, dagRunId, types: 'run.*,step.*' });
    let lastEventId: string | undefined;
    for (let attempts = 1; ; attempts++) {
      let response: Awaited<ReturnType<typeof request>> | undefined;
      try {
        const headers = this.headers('text/event-stream');
        if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
        response = await request(`${this.url}/events?${query}`, { method: 'GET', headers });
      } catch (error) {
        if (attempts >= STREAM_ATTEMPTS) throw this.unreachable(error);
      }
      if (response?.statusCode === 404) {
        await response.body.dump();
        return this.poll(look);
      }
      if (response && response.statusCode !== 200) throw apiError(response.statusCode, await response.body.text(), this.url);
      if (response) {
        // The stream listens from here on: what the run was before is read now, what it becomes is told.
        const ended = await look();
        if (ended) {
          response.body.destroy();
          return ended;
        }
        const parser = new SseParser();
        const decoder = new TextDecoder();
        try {
          for await (const chunk of response.body) {
            let changed = false;
            for (const message of parser.push(decoder.decode(chunk as Buffer, { stream: true }))) {
              if (message.id !== undefined) lastEventId = message.id;
              if (message.event !== 'message' && message.event !== 'dropped') changed = true;
            }
            attempts = 0;
            const end = changed ? await look() : undefined;
            if (end) {
              response.body.destroy();
              return end;
            }
          }
        } catch (error) {
          if (!(error instanceof Error) || error instanceof AppError || error instanceof CliError) throw error;
          // The connection broke off: asked again from the last event seen.
        }
      }
      if (attempts >= STREAM_ATTEMPTS) throw new CliError(`the event stream of ${this.url} broke off`, 'see `troupe status`');
      await sleep(STREAM_RETRY_MS);
    }
  }

  /** A server without the event stream: the run's details are read until they show its end. */
  private async poll(look: () => Promise<RunView | undefined>): Promise<RunView> {
    for (;;) {
      const ended = await look();
      if (ended) return ended;
      await sleep(POLL_MS);
    }
  }

  async close(): Promise<void> {}

  private async call<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers = this.headers('application/json');
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(`${this.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw this.unreachable(error);
    }
    const text = await response.body.text();
    if (response.statusCode >= 200 && response.statusCode < 300) return (text === '' ? {} : JSON.parse(text)) as T;
    throw apiError(response.statusCode, text, this.url);
  }

  private headers(accept: string): Record<string, string> {
    const headers: Record<string, string> = { accept };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    return headers;
  }

  private unreachable(error: unknown): Error {
    const code = errorCode(error);
    if (code && CERTIFICATE_ERRORS.has(code)) {
      return new CliError(`the certificate of the troupe server at ${this.url} is not trusted (${code})`, 'trust its CA with NODE_EXTRA_CA_CERTS=<ca.pem>');
    }
    return new CliError(`cannot reach the troupe server at ${this.url} (${(error as Error).message})`, 'start it with `troupe server`, or check --server');
  }
}

/** The fields the command shows, as the embedded engine gives them: --json prints the same either way. */
function viewOf(run: RunView): RunView {
  return {
    name: run.name, dagRunId: run.dagRunId, status: run.status, statusLabel: run.statusLabel, queuedAt: run.queuedAt,
    startedAt: run.startedAt, finishedAt: run.finishedAt, log: run.log, params: run.params,
    ...(run.workerId !== undefined ? { workerId: run.workerId } : {}),
    nodes: (run.nodes ?? []).map((node) => ({
      step: { name: node.step.name }, status: node.status, statusLabel: node.statusLabel, startedAt: node.startedAt,
      finishedAt: node.finishedAt, error: node.error, stdout: node.stdout, stderr: node.stderr,
    })),
  };
}

/** TLS failures that a CA the client does not trust yet explains. */
const CERTIFICATE_ERRORS = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED']);

/** The code of a failed connection, wherever undici put it (the error or its causes). */
function errorCode(error: unknown): string | undefined {
  for (let current = error; current !== null && typeof current === 'object'; current = (current as { cause?: unknown }).cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
  }
  return undefined;
}

function runPath(name: string, dagRunId: string): string {
  return `/dag-runs/${encodeURIComponent(name)}/${encodeURIComponent(dagRunId)}`;
}

function apiError(status: number, text: string, url: string): Error {
  let document: { code?: string; message?: string } = {};
  try {
    document = JSON.parse(text) as typeof document;
  } catch {
    // Not the API's error document: said by its status alone.
  }
  if (status === 401) return new CliError(`the server at ${url} requires authentication${document.message ? ` (${document.message})` : ''}`, 'pass --token or set TROUPE_TOKEN');
  if (status === 403) return new CliError(`the server at ${url} refused this: ${document.message ?? 'forbidden'}`, 'use a token allowed to do it');
  const code = (document.code ?? (status === 404 ? 'not_found' : 'internal_error')) as ErrorCode;
  return new AppError(code, document.message ?? `the server answered ${status}`);
}
