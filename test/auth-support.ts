// Requests with credentials, for the auth tests: each response is checked against the OpenAPI
// document (checkedFetch), as test/helpers.ts `call` does.
import { SignJWT } from 'jose';
import { answerOf, type Answer, type TestServer } from './helpers.ts';
import { checkedFetch } from './openapi-check.ts';

export type { Answer };

/** An Authorization header (or a Cookie) to send; none when undefined. */
export type Credential = { authorization: string } | { cookie: string } | undefined;

export const basic = (username: string, password: string): Credential => ({ authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` });
export const bearer = (token: string): Credential => ({ authorization: `Bearer ${token}` });

export async function send(server: TestServer, method: string, path: string, credential: Credential, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { ...credential };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await checkedFetch(`${server.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  // An event stream stays open: it was let through, which is all a credential test asks.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, body: undefined, text: '', headers: response.headers };
  }
  return answerOf(response);
}

/** A session token signed with the server's secret that expired an hour ago. */
export async function expiredToken(secret: string, userId: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ver: 0 }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer('troupe').setSubject(userId)
    .setIssuedAt(now - 7200).setExpirationTime(now - 3600).sign(new TextEncoder().encode(secret));
}

/** Signs in and answers the session token; throws when the server refuses. */
export async function signIn(server: TestServer, username: string, password: string): Promise<string> {
  const answer = await send(server, 'POST', '/auth/login', undefined, { username, password });
  if (answer.status !== 200) throw new Error(`sign-in of ${username} failed: ${answer.status} ${answer.text}`);
  return answer.body.token;
}

/** Runs `tasks` with at most `limit` in flight. */
export async function inBatches<T>(tasks: Array<() => Promise<T>>, limit = 8): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]();
    }
  }));
  return results;
}

/** Waits until the run is final, reading it with `credential`. */
export async function waitForRunAs(server: TestServer, credential: Credential, name: string, dagRunId: string): Promise<any> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const answer = await send(server, 'GET', `/dag-runs/${name}/${dagRunId}`, credential);
    if (answer.status === 200 && ![0, 1, 5].includes(answer.body.dagRun.status)) return answer.body.dagRun;
    if (Date.now() > deadline) throw new Error(`run ${name}/${dagRunId} did not finish: ${answer.text}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
