// A real OpenID provider (oidc-provider) on a loopback port, with one confidential client and a few
// accounts, for OIDC login tests; and a browser of sorts: a cookie jar and redirects followed by hand.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseSetCookie } from 'cookie';
import Provider from 'oidc-provider';
import { assertDocumented, checkedFetch } from '../openapi-check.ts';

export interface TestAccount {
  email: string;
  emailVerified?: boolean;
  /** Claims released with the scope `groups`, read at each sign-in (change them between two). */
  groups?: Record<string, unknown>;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/**
 * `redirectUri`: troupe's callback, the only one the client may use. Its login form (the provider's
 * devInteractions) takes any password: `login` names the account of `accounts`.
 */
export async function startTestProvider(redirectUri: string, accounts: Record<string, TestAccount>): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'troupe-test';
  const clientSecret = 'test-client-secret-of-some-length';
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'], groups: ['groups', 'realm_access', 'https://troupe.example/groups'] },
    cookies: { keys: ['test-cookie-key-one'] },
    pkce: { required: () => true },
    // Set, so that the provider does not print a notice for each default it falls back on.
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    findAccount: (_ctx, id) => {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, email: account.email, email_verified: account.emailVerified ?? true, preferred_username: id, name: id, ...account.groups }),
      };
    },
  });
  // Quiet: the provider reports every refused request as a server error otherwise.
  provider.on('server_error', () => {});
  server.on('request', provider.callback());
  return {
    issuer, clientId, clientSecret,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Cookies by name, per host (ports share a host's cookies, as in a browser); paths and expiry kept loosely. */
export class CookieJar {
  private readonly cookies = new Map<string, Map<string, string>>();

  store(url: string, response: Response): void {
    const host = new URL(url).hostname;
    const jar = this.cookies.get(host) ?? new Map<string, string>();
    this.cookies.set(host, jar);
    for (const line of response.headers.getSetCookie()) {
      const cookie = parseSetCookie(line);
      const gone = cookie.maxAge !== undefined && cookie.maxAge <= 0 || (cookie.expires !== undefined && cookie.expires.getTime() < Date.now());
      if (gone || !cookie.value) jar.delete(cookie.name);
      else jar.set(cookie.name, cookie.value);
    }
  }

  get(url: string, name: string): string | undefined {
    return this.cookies.get(new URL(url).hostname)?.get(name);
  }

  delete(url: string, name: string): void {
    this.cookies.get(new URL(url).hostname)?.delete(name);
  }

  header(url: string): string {
    return [...(this.cookies.get(new URL(url).hostname) ?? new Map()).entries()].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export interface Hop {
  url: string;
  response: Response;
  text: string;
}

/**
 * One request as a browser makes it: the jar's cookies go along, the answer's are kept, and a
 * redirect is not followed (the caller follows it, to see each hop).
 */
export async function browse(jar: CookieJar, url: string, init: { method?: string; form?: Record<string, string>; accept?: string } = {}): Promise<Hop> {
  const headers: Record<string, string> = {};
  const cookie = jar.header(url);
  if (cookie) headers.cookie = cookie;
  if (init.accept) headers.accept = init.accept;
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  // A hop to troupe's API is checked against the OpenAPI document; the provider's pages are not the API's.
  const response = await checkedFetch(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
  jar.store(url, response);
  return { url, response, text: await response.text() };
}

/** Follows redirects from `url` until an answer that is not one, or until `stop` says a URL is the end. */
export async function followRedirects(jar: CookieJar, url: string, stop: (url: string) => boolean = () => false): Promise<Hop> {
  let hop = await browse(jar, url);
  for (let hops = 0; hops < 20; hops++) {
    const location = hop.response.headers.get('location');
    if (hop.response.status < 300 || hop.response.status >= 400 || !location) return hop;
    const next = new URL(location, hop.url).href;
    if (stop(next)) return hop;
    hop = await browse(jar, next);
  }
  throw new Error(`more than 20 redirects from ${url}`);
}

/** The action of the first form of an HTML page, absolute. */
export function formAction(hop: Hop): string {
  const match = /<form[^>]*action="([^"]+)"/i.exec(hop.text);
  if (!match) throw new Error(`no form at ${hop.url} (${hop.response.status}): ${hop.text.slice(0, 300)}`);
  return new URL(match[1].replace(/&amp;/g, '&'), hop.url).href;
}

/**
 * Signs in at the provider as a browser would, from its authorization URL: its login form with
 * `login` (any password), then its consent form, following each redirect, until it sends the
 * browser to `callbackPrefix`. Returns that URL; throws with the page when the provider stops elsewhere.
 */
export async function signInAtProvider(jar: CookieJar, authorizationUrl: string, login: string, callbackPrefix: string): Promise<string> {
  let location = authorizationUrl;
  for (let pages = 0; pages < 5; pages++) {
    let callback: string | undefined;
    const page = await followRedirects(jar, location, (url) => {
      if (url.startsWith(callbackPrefix)) callback = url;
      return callback !== undefined;
    });
    if (callback) return callback;
    const prompt = /name="prompt" value="(\w+)"/.exec(page.text)?.[1];
    if (page.response.status !== 200 || !prompt) throw new Error(`the provider stopped at ${page.url} (${page.response.status}): ${page.text.slice(0, 500)}`);
    const submitted = await browse(jar, formAction(page), { form: prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt } });
    const next = submitted.response.headers.get('location');
    if (!next) throw new Error(`the provider answered its ${prompt} form with ${submitted.response.status}: ${submitted.text.slice(0, 500)}`);
    location = new URL(next, submitted.url).href;
    if (location.startsWith(callbackPrefix)) return location;
  }
  throw new Error('the provider asked for more than 5 pages');
}

/** A loopback port free a moment ago, for a server whose address another must know before it starts. */
/** A hop to troupe's API, checked against the OpenAPI document as test/helpers.ts `call` checks its responses. */
export async function documented(hop: Hop): Promise<Hop> {
  const url = new URL(hop.url);
  await assertDocumented({
    method: 'GET', path: `${url.pathname.replace(/^\/api\/v2/, '')}${url.search}`,
    status: hop.response.status, contentType: hop.response.headers.get('content-type'), text: hop.text,
  });
  return hop;
}
