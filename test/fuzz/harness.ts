// The fuzz suite's plumbing: the seed, a client that sends paths as they are, the checks every
// answer must pass, and snapshots of the directories where no file may appear.
import { Agent, request } from 'node:http';
import { readdirSync, lstatSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { assertDocumented } from '../openapi-check.ts';

/** Fixed by default so that CI is repeatable; TROUPE_FUZZ_SEED=<integer> explores another corner. */
export function fuzzSeed(): number {
  const raw = process.env.TROUPE_FUZZ_SEED;
  if (raw === undefined || raw === '') return 14_2026;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`TROUPE_FUZZ_SEED must be an integer, not ${raw}`);
  return seed;
}

export interface FuzzRequest {
  method: string;
  /** Sent byte for byte (no URL normalisation: `..` and `%2e%2e` reach the server as written). */
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface FuzzResponse {
  status: number;
  contentType: string;
  text: string;
}

/** Every error code of docs/api.md. */
const ERROR_CODES = new Set([
  'bad_request', 'not_found', 'forbidden', 'already_exists', 'already_running', 'max_run_reached',
  'not_running', 'internal_error', 'unauthorized', 'bad_gateway', 'remote_node_error', 'payload_too_large', 'headers_too_large', 'request_timeout',
  'method_not_allowed', 'unsupported_media_type',
]);

/** An answer must come well before this; a request that hangs the server is a finding, not a wait. */
const ANSWER_TIMEOUT_MS = 15_000;

export class FuzzClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });
  sent = 0;
  /** How many answers of each status: shows that the fuzz reaches handlers, not only the 404 in front. */
  readonly statuses = new Map<number, number>();

  constructor(readonly port: number) {}

  send(req: FuzzRequest): Promise<FuzzResponse> {
    this.sent++;
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
    const headers: Record<string, string> = { ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}), ...req.headers };
    return new Promise((done, fail) => {
      const outgoing = request({ host: '127.0.0.1', port: this.port, method: req.method, path: req.path, headers, agent: this.agent, timeout: ANSWER_TIMEOUT_MS }, (res) => {
        // An event stream stays open: its answer is its status, type and first message.
        if (req.method.toUpperCase() !== 'HEAD' && res.statusCode === 200 && String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          let answered = false;
          const answer = (text: string) => {
            if (answered) return;
            answered = true;
            this.statuses.set(200, (this.statuses.get(200) ?? 0) + 1);
            const answer = { status: 200, contentType: String(res.headers['content-type']), text };
            res.destroy();
            documented(req, answer).then(() => done(answer), fail);
          };
          res.once('data', (chunk: Buffer) => answer(chunk.toString('utf8')));
          res.once('end', () => answer(''));
          res.once('close', () => answer(''));
          res.on('error', () => undefined);
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => this.statuses.set(res.statusCode ?? 0, (this.statuses.get(res.statusCode ?? 0) ?? 0) + 1));
        res.on('end', () => {
          const answer = { status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') };
          documented(req, answer).then(() => done(answer), fail);
        });
        res.on('error', fail);
      });
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
      outgoing.on('error', fail);
      outgoing.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * Rejects when an answer of the API drifts from the OpenAPI document (see test/openapi-check.ts).
 * The path is taken as sent, not normalised, as the router takes it.
 */
function documented(req: FuzzRequest, res: FuzzResponse): Promise<void> {
  const match = /^\/api\/v2(?=[/?]|$)(.*)$/s.exec(req.path);
  if (!match) return Promise.resolve();
  return assertDocumented({ method: req.method, path: match[1], status: res.status, contentType: res.contentType || null, text: res.text });
}

const repoRoot = resolve(import.meta.dirname, '..', '..');
/** Where the server's own files live: a body naming them tells an attacker the layout. */
const serverPaths = [repoRoot, homedir(), 'node_modules'].filter((path) => path.length > 1);
const stackLine = /\n\s+at .+[:(]\d+:\d+\)?|\bat (?:file:\/\/|node:internal)/;

/** What is wrong with one answer; empty when it passes. `home` may appear in run records (log paths). */
export function problemsOf(req: FuzzRequest, res: FuzzResponse, home: string): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`status ${res.status}`);
  const sentText = `${req.path}\n${req.body?.toString() ?? ''}`;
  const isError = res.status >= 400;
  if (isError && req.method !== 'HEAD') problems.push(...errorDocumentProblems(res));
  const visible = isError ? res.text : res.text.split(home).join('<home>');
  if (stackLine.test(visible)) problems.push('stack trace in body');
  for (const path of [...serverPaths, ...(isError ? [home] : [])]) {
    if (visible.includes(path) && !sentText.includes(path)) problems.push(`server path ${path} in body`);
  }
  return problems;
}

/** The error document of docs/api.md: {code, message, details?}, served as JSON. */
export function errorDocumentProblems(res: FuzzResponse): string[] {
  if (!res.contentType.startsWith('application/json')) return [`error body is ${res.contentType || 'untyped'}: ${res.text.slice(0, 80)}`];
  let doc: unknown;
  try {
    doc = JSON.parse(res.text);
  } catch {
    return [`error body is not JSON: ${res.text.slice(0, 80)}`];
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return ['error body is not an object'];
  const { code, message, details, ...rest } = doc as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof code !== 'string' || !ERROR_CODES.has(code)) problems.push(`error code ${JSON.stringify(code)}`);
  if (typeof message !== 'string' || message === '') problems.push('error without message');
  if (details !== undefined && (typeof details !== 'object' || details === null || Array.isArray(details))) problems.push('details is not an object');
  if (Object.keys(rest).length > 0) problems.push(`unexpected error fields ${Object.keys(rest).join(', ')}`);
  return problems;
}

/** One line per failing request, short enough to read and complete enough to replay. */
export function describe(req: FuzzRequest): string {
  const body = req.body === undefined ? '' : ` body=${JSON.stringify(req.body.toString().slice(0, 160))}${req.body.length > 160 ? `…(${req.body.length} bytes)` : ''}`;
  return `${req.method} ${req.path.length > 160 ? `${req.path.slice(0, 160)}…(${req.path.length})` : req.path}${body}`;
}

/** Sends the requests one after another (the server's state makes order matter) and collects findings. */
export async function sendAll(client: FuzzClient, home: string, requests: FuzzRequest[], expect?: (req: FuzzRequest, res: FuzzResponse) => string[]): Promise<string[]> {
  const findings: string[] = [];
  for (const req of requests) {
    let res: FuzzResponse;
    try {
      res = await client.send(req);
    } catch (error) {
      findings.push(`${describe(req)} -> ${(error as Error).message}`);
      continue;
    }
    const problems = [...problemsOf(req, res, home), ...(expect?.(req, res) ?? [])];
    if (problems.length > 0) findings.push(`${describe(req)} -> ${res.status} ${problems.join('; ')} ${res.text.slice(0, 160)}`);
  }
  return findings;
}

/** Relative paths of every entry under `dir`, not descending into `skip` (names or absolute paths). */
function listTree(dir: string, skip: Set<string>, prefix = ''): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry);
    if (skip.has(entry) || skip.has(path)) return [];
    const relative = `${prefix}${entry}`;
    const isDir = lstatSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
    return isDir ? [relative, ...listTree(path, skip, `${relative}/`)] : [relative];
  });
}

/**
 * The places a traversal would write to: the scratch directory around the home (all but the
 * home), the working directory (the repository), and the top of the temporary directory. Other
 * programs write to the temporary directory too: there only names troupe would write count
 * (definitions, temporary writes, logs, scripts, and the names the fuzz sends).
 */
export function snapshot(scratch: string, home: string): Set<string> {
  const troupeLike = /\.(ya?ml|tmp|log|env|script)$|^(x|a|b|fx.*|yz\d+|escape|outside|passwd|shadow|etc|nul|CON)$/;
  return new Set([
    ...listTree(scratch, new Set([home])).map((path) => `scratch:${path}`),
    ...listTree(process.cwd(), new Set(['node_modules', '.git', 'dist', 'build'])).map((path) => `cwd:${path}`),
    ...readdirSync(tmpdir()).filter((entry) => troupeLike.test(entry)).map((entry) => `tmp:${entry}`),
  ]);
}
