// The OpenAPI 3.1 document of the API, generated from the route table: each route's pattern (path
// parameters), its RouteDoc (query parameters, body, success responses, error codes) and the TypeBox
// schemas those name. Nothing in it is written by hand, so it cannot say other than what is served.
import type { TSchema } from 'typebox';
import { IDEMPOTENCY_KEY_MAX_LENGTH, type ErrorCode } from '../core/index.ts';
import { SAFE_METHODS } from './cross-site.ts';
import { statusOfCode } from './errors.ts';
import { IDEMPOTENCY_HEADER } from './idempotency.ts';
import { takesRemoteNode } from './remote-nodes.ts';
import { allComponents, ErrorDocument, ref } from './response-schemas.ts';
import { PATH_PARAMETERS, type RouteDoc } from './route-doc.ts';
import type { RouteEntry } from './router.ts';
import { typeBuilder, type TypeBuilder } from './schemas.ts';

type Json = Record<string, unknown>;

const TAGS = [
  { name: 'system', description: 'Health and this document' },
  { name: 'dags', description: 'DAG definitions: list, create, read, edit, validate, rename, delete, suspend, search, tags' },
  { name: 'dag-runs', description: 'Starting runs, their details, logs, outputs, stop, retry and step status' },
  { name: 'queues', description: 'Enqueueing, dequeue, reschedule and the queues' },
  { name: 'monitoring', description: 'Prometheus metrics and the machine\'s resource history' },
  { name: 'auth', description: 'Signing in, the caller\'s own account' },
  { name: 'users', description: 'User management (admin)' },
  { name: 'api-keys', description: 'API keys (admin)' },
];

/** Every route that is not public takes either (docs/auth.md). */
const SECURITY_SCHEMES = {
  basicAuth: { type: 'http', scheme: 'basic', description: 'A stored user\'s username and password, or the static `auth.basic` pair' },
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'A session token (POST /auth/login), an API key, or the static `auth.token.value`' },
};

const ERROR_WHEN: Record<ErrorCode, string> = {
  bad_request: 'invalid parameters, body, name or status value',
  not_found: 'the DAG, run, step or queue does not exist',
  forbidden: 'not permitted',
  already_exists: 'the DAG file or run id exists already',
  already_running: 'the DAG (or the run) is running already',
  max_run_reached: 'singleton or maxActiveRuns refuses the run',
  not_running: 'the run is not running',
  internal_error: 'a server-side failure, or a request during shutdown',
  unauthorized: 'authentication failed',
  bad_gateway: 'an upstream service failed',
  remote_node_error: 'the remote node could not be reached',
  payload_too_large: 'the body exceeds 1 MiB',
  request_timeout: 'the headers did not arrive within 60 s (node:http carrier)',
  headers_too_large: 'the headers exceed 16 KiB (node:http carrier)',
  method_not_allowed: 'the path is served with other methods, which the Allow header lists',
  too_many_requests: 'too many failed sign-ins for the username or from the address; Retry-After says when to try again',
  unsupported_media_type: 'a request signed in by the session cookie has a Content-Type other than JSON (application/json or */*+json)',
  insufficient_storage: 'the file system the write goes to is full (the message names it); nothing was changed, and the same request succeeds once space is freed',
  idempotency_mismatch: 'the Idempotency-Key was used, within a day, by the same caller with another route, DAG or body',
  idempotency_in_progress: 'the first request with this Idempotency-Key is still being answered; repeat it once it has been',
};

/**
 * Codes any route may answer with besides its own: a server-side failure; the protocol errors (a
 * malformed request -- no Host, two Content-Lengths, an unknown HTTP version -- is 400 on either
 * carrier, whatever the route); a malformed path segment or query value; for a body, its size and JSON.
 */
function commonErrors(entry: RouteEntry, doc: RouteDoc): ErrorCode[] {
  const codes: ErrorCode[] = ['internal_error', 'bad_request', 'request_timeout', 'headers_too_large'];
  // Once authentication is on: no or bad credentials, a role that may not, or Basic credentials
  // of a username or from an address past its failed sign-ins.
  if (!entry.public) codes.push('unauthorized', 'forbidden', 'too_many_requests');
  // A change sent by a browser from another site without a Bearer token; with the session cookie,
  // a body whose Content-Type is not JSON (cross-site.ts).
  const changes = !SAFE_METHODS.has(entry.method) || entry.writes;
  if (changes) codes.push('forbidden');
  if (!SAFE_METHODS.has(entry.method)) codes.push('unsupported_media_type');
  if (doc.body) codes.push('payload_too_large');
  // An unknown node is 400; a node that fails, 502 (remote-nodes.ts).
  if (takesRemoteNode(entry.pattern)) codes.push('remote_node_error', 'bad_gateway');
  if (entry.idempotent) codes.push('idempotency_mismatch', 'idempotency_in_progress');
  return codes;
}

/** `/dags/:fileName` -> `/dags/{fileName}` */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z]+)/g, '{$1}');
}

/** An error response whose `code` is one of `codes`. */
function errorResponse(Type: TypeBuilder, codes: ErrorCode[]): Json {
  return {
    description: codes.map((code) => `\`${code}\`: ${ERROR_WHEN[code]}`).join('; '),
    content: {
      'application/json': {
        schema: Type.Intersect([ref(Type, ErrorDocument), Type.Object({ code: Type.Enum(codes) })]),
      },
    },
  };
}

/** A status answered with one code refers to that code's shared response (components.responses). */
function errorResponses(entry: RouteEntry, doc: RouteDoc, shared: Map<ErrorCode, Json>, Type: TypeBuilder): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...(doc.errors ?? []), ...commonErrors(entry, doc)])) {
    const status = statusOfCode(code, doc.statusOverrides);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Json = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    if (codes.length > 1) {
      responses[status] = errorResponse(Type, codes);
      continue;
    }
    if (!shared.has(codes[0])) shared.set(codes[0], errorResponse(Type, codes));
    responses[status] = { $ref: `#/components/responses/${codes[0]}` };
  }
  return responses;
}

function operation(Type: TypeBuilder, entry: RouteEntry, doc: RouteDoc, shared: Map<ErrorCode, Json>): Json {
  const pathParameters = [...entry.pattern.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({
    name, in: 'path', required: true, description: PATH_PARAMETERS[name] ?? name, schema: Type.String({ minLength: 1 }),
  }));
  const queryParameters: Json[] = (doc.query ?? []).map((param) => ({
    name: param.name, in: 'query', required: param.required === true, description: param.description, schema: param.schema(Type),
  }));
  if (takesRemoteNode(entry.pattern)) {
    queryParameters.push({
      name: 'remoteNode', in: 'query', required: false, schema: Type.String({ default: 'local' }),
      description: 'A node of config.yaml `remoteNodes` that answers the request instead (its answer is returned as it is); `local` or empty: this server',
    });
  }
  const headerParameters = entry.idempotent ? [{
    name: IDEMPOTENCY_HEADER, in: 'header', required: false, schema: Type.String({ minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH }),
    description: 'Makes the request act once: a repeat by the same caller with the same key, route and body within 24 hours ' +
      'starts nothing and gets the first answer again (its status and body); with another route or body it is 422 ' +
      '`idempotency_mismatch`, while the first is being answered 409 `idempotency_in_progress`. 1 to 255 printable ASCII ' +
      'characters; anything else is 400.',
  }] : [];
  const responses: Json = {};
  for (const [status, response] of Object.entries(doc.responses)) {
    const content = response.body
      ? { 'application/json': { schema: response.body.build(Type) } }
      : response.text ? { [response.text]: { schema: Type.String() } } : undefined;
    const headers = response.headers && Object.fromEntries(Object.entries(response.headers).map(([name, description]) => [name, { description, schema: Type.String() }]));
    responses[status] = { description: response.description, ...(headers ? { headers } : {}), ...(content ? { content } : {}) };
  }
  Object.assign(responses, errorResponses(entry, doc, shared, Type));
  const body = doc.body?.build(Type);
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    ...(entry.public ? { security: [] } : { security: [{ basicAuth: [] }, { bearerAuth: [] }] }),
    ...(pathParameters.length + queryParameters.length + headerParameters.length > 0 ? { parameters: [...pathParameters, ...queryParameters, ...headerParameters] } : {}),
    ...(body ? {
      requestBody: {
        // A body with no required field may be left out: it reads as `{}`.
        required: (body as { required?: string[] }).required !== undefined,
        description: 'JSON; fields beyond these are accepted and ignored',
        content: { 'application/json': { schema: body } },
      },
    } : {}),
    responses,
  };
}

/** Routes without a RouteDoc are left out (test/openapi.test.ts fails on them). */
export async function buildOpenApiDocument(routes: RouteEntry[], version: string): Promise<Json> {
  const Type = await typeBuilder();
  const paths: Record<string, Json> = {};
  const sharedErrors = new Map<ErrorCode, Json>();
  for (const entry of routes) {
    if (!entry.doc) continue;
    const path = openApiPath(entry.pattern);
    paths[path] = { ...paths[path], [entry.method.toLowerCase()]: operation(Type, entry, entry.doc, sharedErrors) };
  }
  const schemas: Record<string, TSchema> = {};
  for (const component of allComponents()) schemas[component.name] = component.build(Type);
  // Plain JSON: whatever the builder keeps beside the keywords stays out of the document.
  return JSON.parse(JSON.stringify({
    openapi: '3.1.0',
    info: {
      title: 'troupe',
      version,
      description: 'The HTTP API of troupe, a workflow orchestration service compatible with Dagu\'s /api/v2. ' +
        'Every error answers `{code, message, details?}`; each response lists the codes it carries. ' +
        'HEAD is served wherever GET is, with the GET response\'s status and headers and no body.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/api/v2' }],
    tags: TAGS,
    paths,
    components: { securitySchemes: SECURITY_SCHEMES, schemas, responses: Object.fromEntries([...sharedErrors].sort(([a], [b]) => a.localeCompare(b))) },
  })) as Json;
}
