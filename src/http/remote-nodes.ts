// Forwards a request whose `remoteNode` names a configured remote to that node and answers with
// the remote's status, body and content type as they are. The one place requests leave for a
// remote: routes never see a forwarded request.
import type { Agent } from 'undici';
import { AppError, LOCAL_NODE, type RemoteNode } from '../core/index.ts';
import { urlBelow } from './remote-path.ts';
import type { Readable } from 'node:stream';
import type { HttpResponse, RawRequest, RemoteForwarder, StreamSink } from './types.ts';

export interface RemoteNodesOptions {
  /** The longest a forwarded request may take, connection to the last byte of the answer. */
  timeoutMs: number;
}

/**
 * The first path segments of the routes that take no `remoteNode` in Dagu 1.30.2's API: the
 * server's own health, metrics and API document, and its sign-in and accounts, which a client
 * must never reach another node's through this one.
 */
const localOnly = new Set(['health', 'metrics', 'openapi.json', 'auth', 'users', 'api-keys']);

/** Whether a path below the API root (`/dags/x`, or a route's pattern) may be sent to a remote node. */
export function takesRemoteNode(apiPath: string): boolean {
  return !localOnly.has(apiPath.split('/')[1] ?? '');
}

/** Request headers that say what the client sends and accepts; its credentials are for this server only. */
const forwardedRequestHeaders = ['accept', 'accept-language', 'content-type', 'user-agent', 'if-none-match', 'if-modified-since', 'last-event-id'];
const forwardedResponseHeaders = ['content-type', 'content-disposition', 'cache-control', 'etag', 'last-modified', 'retry-after', 'allow'];

/** Beyond it an answer is refused rather than held in memory: no API answer comes near it. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 10_000;

interface Remote {
  node: RemoteNode;
  /** Made with the first request forwarded to the node. */
  agent?: Agent;
  authorization?: string;
}

// Loaded with the first request forwarded: a server that forwards none never holds the HTTP client
// (about 10 MB of the process's memory).
let undici: Promise<typeof import('undici')> | undefined;
const loadUndici = () => (undici ??= import('undici'));

export class RemoteNodes implements RemoteForwarder {
  private remotes = new Map<string, Remote>();
  private readonly timeoutMs: number;
  private readonly connectTimeoutMs: number;

  constructor(nodes: RemoteNode[], options: RemoteNodesOptions) {
    this.timeoutMs = options.timeoutMs;
    this.connectTimeoutMs = Math.min(CONNECT_TIMEOUT_MS, this.timeoutMs);
    this.replace(nodes);
  }

  /** Takes a new list (a reloaded configuration); requests already forwarded finish on the old connections. */
  replace(nodes: RemoteNode[]): void {
    const previous = this.remotes;
    this.remotes = new Map(nodes.map((node) => [node.name, this.remoteOf(node)]));
    for (const { agent } of previous.values()) void agent?.close();
  }

  names(): string[] {
    return [...this.remotes.keys()];
  }

  /**
   * The remote's answer when the request names a remote node, undefined when this server answers it.
   * `apiPath`: the request's path below the API root (`/dags`), canonical (canonicalRemotePath):
   * the path that was authorized, sent as it is.
   */
  async forward(raw: RawRequest, apiPath: string): Promise<HttpResponse | undefined> {
    const query = new URLSearchParams(raw.query);
    const name = query.get('remoteNode');
    if (!name || name === LOCAL_NODE) return undefined;
    if (!takesRemoteNode(apiPath)) return undefined;
    // Before the node is looked up: a reload meanwhile cannot leave an agent on a list it closed.
    const { Agent, request } = await loadUndici();
    const remote = this.remotes.get(name);
    if (!remote) {
      const known = this.names();
      throw new AppError('bad_request', `remote node "${name}" is not configured (${known.length > 0 ? `remoteNodes: ${known.join(', ')}` : 'no remote node is'})`);
    }
    query.delete('remoteNode');
    const search = query.toString();
    const url = urlBelow(remote.node.apiBaseURL, apiPath, search);
    const headers: Record<string, string> = {};
    for (const header of forwardedRequestHeaders) {
      if (raw.headers[header] !== undefined) headers[header] = raw.headers[header];
    }
    const body = raw.body && raw.body.length > 0 ? raw.body : undefined;
    if (body && !headers['content-type']) headers['content-type'] = 'application/json';
    if (remote.authorization) headers.authorization = remote.authorization;
    // A start-sync answers once its run ended: it may take as long as the run is given, and more.
    const limitMs = this.timeoutMs + (apiPath.endsWith('/start-sync') ? syncSeconds(body) * 1000 : 0);
    remote.agent ??= new Agent({
      connect: { rejectUnauthorized: !remote.node.skipTLSVerify, timeout: this.connectTimeoutMs },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), limitMs);
    const { signal } = controller;
    const failed = (error: unknown, stage: 'reach' | 'read') => this.failure(name, error, signal.aborted, stage, limitMs);
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      // HEAD goes as GET so that the carrier sends the Content-Length of the remote's GET answer.
      answer = await request(url, { method: raw.method === 'HEAD' ? 'GET' : raw.method as 'GET', headers, body, signal, dispatcher: remote.agent, headersTimeout: limitMs });
    } catch (error) {
      clearTimeout(timer);
      throw failed(error, 'reach');
    }
    const responseHeaders: Record<string, string> = {};
    for (const header of forwardedResponseHeaders) {
      const value = answer.headers[header];
      if (value !== undefined) responseHeaders[header] = Array.isArray(value) ? value.join(', ') : value;
    }
    // An event stream (the remote's events, a step's log followed) is passed on as it comes, for
    // as long as both ends keep it open: no limit on its length, none on its time.
    if (answer.statusCode === 200 && /^text\/event-stream/.test(responseHeaders['content-type'] ?? '') && raw.method !== 'HEAD') {
      clearTimeout(timer);
      return { status: 200, headers: { ...responseHeaders, 'x-accel-buffering': 'no' }, stream: (sink) => relay(answer.body, sink) };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of answer.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_ANSWER_BYTES) {
          answer.body.destroy();
          throw new AppError('bad_gateway', `remote node "${name}" answered with more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      throw error instanceof AppError ? error : failed(error, 'read');
    } finally {
      clearTimeout(timer);
    }
    return { status: answer.statusCode, headers: responseHeaders, body: Buffer.concat(chunks) };
  }

  async close(): Promise<void> {
    const remotes = [...this.remotes.values()];
    this.remotes = new Map();
    await Promise.all(remotes.map(({ agent }) => agent?.destroy()));
  }

  private remoteOf(node: RemoteNode): Remote {
    let authorization: string | undefined;
    // Dagu's precedence: basic auth when both are set (the configuration refuses both).
    if (node.isBasicAuth) authorization = `Basic ${Buffer.from(`${node.basicAuthUsername ?? ''}:${node.basicAuthPassword ?? ''}`).toString('base64')}`;
    else if (node.isAuthToken) authorization = `Bearer ${node.authToken ?? ''}`;
    return { node, authorization };
  }

  /**
   * The error document of a forwarded request that got no complete answer. Messages carry the
   * node's name and the failure's code, never the request's headers (its credentials).
   */
  private failure(name: string, error: unknown, timedOut: boolean, stage: 'reach' | 'read', limitMs: number): AppError {
    const code = errorCode(error);
    if (code === 'UND_ERR_CONNECT_TIMEOUT' && !timedOut) {
      return new AppError('remote_node_error', `remote node "${name}" cannot be reached (no connection within ${this.connectTimeoutMs / 1000} s)`);
    }
    if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new AppError('remote_node_error', `remote node "${name}" did not answer within ${limitMs / 1000} s`);
    }
    if (stage === 'read') return new AppError('bad_gateway', `remote node "${name}" broke off its answer (${code ?? 'connection closed'})`);
    const tls = code !== undefined && /CERT|SELF_SIGNED|TLS|SSL/.test(code) ? '; skipTLSVerify: true accepts a certificate that cannot be verified' : '';
    return new AppError('remote_node_error', `remote node "${name}" cannot be reached (${code ?? 'connection failed'})${tls}`);
  }
}

/** The `timeout` a start-sync body asks for (seconds), 0 when it has none the remote would take. */
function syncSeconds(body: Buffer | undefined): number {
  try {
    const timeout = (JSON.parse(body?.toString('utf8') ?? '') as { timeout?: unknown }).timeout;
    return Number.isInteger(timeout) && (timeout as number) > 0 && (timeout as number) <= 86_400 ? timeout as number : 0;
  } catch {
    return 0;
  }
}

/** A remote's event stream, passed on chunk by chunk; read no faster than the client takes it. */
function relay(body: Readable, sink: StreamSink): void {
  const decoder = new TextDecoder();
  sink.onClosed(() => body.destroy());
  sink.onDrained(() => body.resume());
  body.on('data', (chunk: Buffer) => {
    if (!sink.write(decoder.decode(chunk, { stream: true }))) body.pause();
  });
  // The remote ended its stream, or broke it off: the client's ends too (it may resume).
  body.on('end', () => sink.end());
  body.on('error', () => sink.end());
  if (sink.closed) body.destroy();
}

/** The system's or undici's code of a failure (`ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`), wherever undici put it. */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
