// Checks responses against the OpenAPI document the server serves (built here from the same route
// table): the status must be one the operation lists, and the body must match that status's schema
// (ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1). test/helpers.ts runs every response of
// `call` through it, so a response of any integration test that drifts from the document fails
// that test, naming the route, the status and the schema path. Tests that need a request `call`
// cannot make (headers, cookies, HEAD, manual redirects) use `checkedFetch` instead of `fetch`, and
// `checkRaw` for what they read off a socket; a response kept out of the check says why, by
// `uncheckedFetch(reason, ...)`, so that no gap is silent.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { apiRouter, buildOpenApiDocument } from '../src/http/index.ts';

type Json = Record<string, any>;

export interface ObservedResponse {
  method: string;
  /** Path below /api/v2, with or without its query string. */
  path: string;
  status: number;
  contentType: string | null;
  text: string;
}

/** A response matched to its operation: `route` is the document's path template. */
export interface CheckedResponse extends ObservedResponse {
  route: string;
  /** The document's method for it (HEAD is checked as GET). */
  operation: string;
}

const DOCUMENT_ID = 'troupe-openapi';
const MAX_PROBLEMS = 12;
const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ route: string; segments: string[] }>;
  /** Each schema object of the document -> its JSON pointer, to name where a check failed. */
  private readonly pointers = new Map<object, string>();

  constructor(readonly document: Json) {
    // strict: a keyword ajv does not know (a typo, or one OpenAPI 3.1 does not allow) is an error.
    // verbose: each error carries the schema object it failed in, which `pointers` names.
    this.ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, verbose: true });
    // The document's own fields beside the schemas it holds.
    for (const field of ['openapi', 'info', 'servers', 'tags', 'paths', 'components']) this.ajv.addKeyword(field);
    this.ajv.addSchema(document, DOCUMENT_ID);
    this.templates = Object.keys(document.paths).map((route) => ({ route, segments: route.split('/').filter(Boolean) }));
    const walk = (node: unknown, pointer: string) => {
      if (node === null || typeof node !== 'object') return;
      this.pointers.set(node, pointer);
      for (const [key, value] of Object.entries(node)) walk(value, `${pointer}/${escape(key)}`);
    };
    walk(document, '#');
  }

  /**
   * The document's path template for a request path, split as the router splits it: literal
   * segments win over parameters, an empty segment inside is one, a trailing slash is ignored.
   */
  routeOf(path: string): string | undefined {
    const parts = path.split('?')[0].replace(/^\//, '').replace(/\/$/, '').split('/');
    let best: { route: string; literals: number } | undefined;
    for (const { route, segments } of this.templates) {
      if (segments.length !== parts.length) continue;
      let literals = 0;
      const fits = segments.every((segment, index) => {
        if (segment.startsWith('{')) return true;
        literals++;
        return segment === parts[index];
      });
      if (fits && (!best || literals > best.literals)) best = { route, literals };
    }
    return best?.route;
  }

  /**
   * The responses of operations the document has are checked; others (a path or method it does not
   * list: a 404 or 405 for a route that does not exist) are returned as undefined.
   */
  match(response: ObservedResponse): CheckedResponse | undefined {
    const route = this.routeOf(response.path);
    const operation = response.method === 'HEAD' ? 'get' : response.method.toLowerCase();
    if (route === undefined || !this.document.paths[route][operation]) return undefined;
    return { ...response, route, operation };
  }

  /** Every way the response differs from the document; empty when it matches. */
  problems(response: CheckedResponse): string[] {
    const where = `${response.method} ${response.route} answered ${response.status}`;
    const responses = this.document.paths[response.route][response.operation].responses as Json;
    let pointer = `#/paths/${escape(response.route)}/${response.operation}/responses/${response.status}`;
    let described = responses[String(response.status)];
    if (!described) return [`${where}, a status the document does not list for it (it lists ${Object.keys(responses).join(', ')})`];
    if (described.$ref) {
      pointer = described.$ref;
      described = this.resolve(described.$ref);
    }
    if (response.method === 'HEAD') return response.text === '' ? [] : [`${where} with a body to HEAD`];
    const content = described.content as Json | undefined;
    if (!content) return response.text === '' ? [] : [`${where} with a body, where the document says it has none: ${response.text.slice(0, 200)}`];
    const [mediaType] = Object.keys(content);
    if (!response.contentType?.startsWith(mediaType)) return [`${where} as ${response.contentType}, where the document says ${mediaType}`];
    if (mediaType !== 'application/json') return [];
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      return [`${where} with a body that is not JSON: ${response.text.slice(0, 200)}`];
    }
    const validate = this.compile(`${pointer}/content/${escape(mediaType)}/schema`);
    if (validate(body)) return [];
    return this.explain(where, validate);
  }

  /** A line per way the body broke `validate`'s schema, naming the schema's JSON pointer. */
  private explain(where: string, validate: ValidateFunction): string[] {
    const errors = validate.errors ?? [];
    const lines = errors.slice(0, MAX_PROBLEMS).map((error) => {
      const schema = error.parentSchema && this.pointers.get(error.parentSchema);
      const params = error.params && Object.keys(error.params).length > 0 ? ` ${JSON.stringify(error.params)}` : '';
      return `${where}: body${error.instancePath} ${error.message}${params} (schema ${schema ? `${schema}/${error.keyword}` : error.schemaPath})`;
    });
    if (errors.length > MAX_PROBLEMS) lines.push(`... and ${errors.length - MAX_PROBLEMS} more`);
    return lines;
  }

  /**
   * A response no operation holds (a path the API does not serve, a method the path is not served
   * with): an error must still be the error document (components.schemas.Error).
   */
  unmatchedProblems(response: ObservedResponse): string[] {
    if (response.status < 400 || response.method === 'HEAD') return [];
    const where = `${response.method} ${response.path.split('?')[0]} (no operation) answered ${response.status}`;
    if (!response.contentType?.startsWith('application/json')) return [`${where} as ${response.contentType}, where every error is application/json`];
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      return [`${where} with a body that is not JSON: ${response.text.slice(0, 200)}`];
    }
    const validate = this.compile('#/components/schemas/Error');
    return validate(body) ? [] : this.explain(where, validate);
  }

  private resolve(ref: string): Json {
    return ref.slice(2).split('/').reduce((node: Json, key) => node[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
  }

  /** The validator of the schema at `pointer` (`#/components/schemas/Node`); throws when it is not valid JSON Schema. */
  compile(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

let checker: Promise<OpenApiChecker> | undefined;

/** The checker of the document this build serves, made once per test process. */
export function openApiChecker(): Promise<OpenApiChecker> {
  checker ??= buildOpenApiDocument(apiRouter().entries(), 'test').then((document) => new OpenApiChecker(document));
  return checker;
}

/** Every response checked in this process, for test/openapi.test.ts to see which operations ran. */
export const checkedResponses: CheckedResponse[] = [];

/** Throws when the response drifts from the document; `TROUPE_OPENAPI_CHECK=0` turns the check off. */
export async function assertDocumented(response: ObservedResponse): Promise<void> {
  if (process.env.TROUPE_OPENAPI_CHECK === '0') return;
  const openApi = await openApiChecker();
  const matched = openApi.match(response);
  if (matched) checkedResponses.push(matched);
  const problems = matched ? openApi.problems(matched) : openApi.unmatchedProblems(response);
  if (problems.length > 0) throw new Error(`response drifts from the OpenAPI document (GET /api/v2/openapi.json):\n  ${problems.join('\n  ')}`);
}

/** Where the API is served below a server's origin. */
const API_PREFIX = '/api/v2';

/** The path below /api/v2 (query included) of a URL of the API; undefined for any other URL. */
export function apiPathOf(url: string | URL): string | undefined {
  const parsed = new URL(String(url));
  if (parsed.pathname !== API_PREFIX && !parsed.pathname.startsWith(`${API_PREFIX}/`)) return undefined;
  return `${parsed.pathname.slice(API_PREFIX.length)}${parsed.search}`;
}

/**
 * `fetch`, whose response (when it is one of the API's) must match the document: a drift rejects
 * with the route, the status and the schema path. The body stays unread for the caller.
 */
export async function checkedFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(input, init);
  // A followed redirect answers for the URL it led to, with GET (as fetch follows a 302 or 303).
  const url = response.redirected ? response.url : input;
  if (apiPathOf(url) === undefined) return response;
  const method = response.redirected ? 'GET' : init.method ?? 'GET';
  // An event stream may never end: its status and type are checked, its body is the caller's to read.
  const text = response.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await response.clone().text();
  await assertDocumentedAt(method, url, { status: response.status, contentType: response.headers.get('content-type'), text });
  return response;
}

/** `assertDocumented` for an answer to `method url`, where the URL is the API's; any other URL passes. */
export async function assertDocumentedAt(method: string, url: string | URL, answer: Pick<ObservedResponse, 'status' | 'contentType' | 'text'>): Promise<void> {
  const path = apiPathOf(url);
  if (path !== undefined) await assertDocumented({ method: method.toUpperCase(), path, ...answer });
}

/**
 * `fetch` for a response the document does not describe on purpose (a CORS preflight, the answer
 * of an outside server): `reason` says which, where the test reads.
 */
export function uncheckedFetch(reason: string, input: string | URL, init?: RequestInit): Promise<Response> {
  if (reason.trim() === '') throw new Error('uncheckedFetch needs the reason the response is not checked');
  return fetch(input, init);
}

/** Checks a response read off a socket (test/raw-http.ts) to `method path` (path below /api/v2). */
export function checkRaw(method: string, path: string, response: { status: number; headers: Map<string, string[]>; body: string }): Promise<void> {
  return assertDocumented({ method, path, status: response.status, contentType: response.headers.get('content-type')?.[0] ?? null, text: response.body });
}
