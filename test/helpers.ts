// Boots the real wiring (LMDB in a temp dir, the real pool, a real server on a loopback port).
import { after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTroupe, homePaths, type Troupe, type TroupeConfig } from '../src/main.ts';
import { checkedFetch } from './openapi-check.ts';

export { checkedFetch, checkRaw, uncheckedFetch } from './openapi-check.ts';

/** A response as tests read it: status, text, the body parsed when it is JSON (else undefined), headers. */
export interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text, headers: response.headers };
}

export interface TestServer {
  base: string;
  home: string;
  troupe: Troupe;
  close(): Promise<void>;
  call(method: string, path: string, body?: unknown): Promise<Answer>;
  writeDag(fileName: string, spec: string): Promise<void>;
  waitForRun(name: string, dagRunId: string, done?: (run: any) => boolean): Promise<any>;
  /** Starts a stored DAG (`body`: the start request's) and waits for the run to finish. */
  startAndWait(name: string, body?: object): Promise<any>;
  /** The text a step of a run logged to stdout. */
  stepLog(name: string, dagRunId: string, step: string): Promise<string>;
}

/** `config.home`: a directory to use instead of a new temporary one (removed on close all the same). */
export async function startTestServer(carrier: 'uws' | 'node' = 'uws', config: Partial<TroupeConfig> = {}): Promise<TestServer> {
  const home = config.home ?? await mkdtemp(join(tmpdir(), 'troupe-test-'));
  const troupe = await startTroupe({ host: '127.0.0.1', port: 0, ...homePaths(home), carrier, maxThreads: 2, ...config, home });
  const base = `http://127.0.0.1:${troupe.server.port}/api/v2`;
  const call: TestServer['call'] = async (method, path, body) => {
    // Every response a test sees must be one the OpenAPI document describes: checkedFetch fails otherwise.
    const response = await checkedFetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return answerOf(response);
  };
  const waitForRun: TestServer['waitForRun'] = async (name, dagRunId, done = (run) => ![0, 1, 5].includes(run.status)) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const response = await call('GET', `/dag-runs/${name}/${dagRunId}`);
      if (response.status === 200 && done(response.body.dagRun)) return response.body.dagRun;
      if (Date.now() > deadline) throw new Error(`run ${name}/${dagRunId} did not reach the expected state: ${response.text}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const startAndWait: TestServer['startAndWait'] = async (name, body = {}) => {
    const started = await call('POST', `/dags/${name}/start`, body);
    if (started.status !== 200) throw new Error(`${name} did not start: ${started.status} ${started.text}`);
    return waitForRun(name, started.body.dagRunId);
  };
  const stepLog: TestServer['stepLog'] = async (name, dagRunId, step) =>
    (await call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log`)).body.content;
  return {
    base, home, troupe, call, waitForRun, startAndWait, stepLog,
    writeDag: (fileName, spec) => writeFile(join(home, 'dags', `${fileName}.yaml`), spec),
    close: async () => {
      await troupe.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** A two-step DAG with a parameter, an output passed on and a line on stderr. */
export const HELLO = 'description: hello dag\ntags: [demo, X]\nparams:\n  - NAME: world\nsteps:\n  - name: s1\n    command: echo hello ${NAME}\n    output: GREETING\n  - name: s2\n    command: echo "second $GREETING"; echo oops >&2\n';

/**
 * A server shared by the tests of the file (or suite) it is called in: started, with `dags` written,
 * before the first test and closed after the last. The object is filled in when it starts.
 */
export function sharedServer(carrier: 'uws' | 'node' = 'uws', dags: Record<string, string> = {}): TestServer {
  const server = {} as TestServer;
  before(async () => {
    Object.assign(server, await startTestServer(carrier));
    for (const [fileName, spec] of Object.entries(dags)) await server.writeDag(fileName, spec);
  });
  after(() => server.close());
  return server;
}

/**
 * One suite per carrier, `${title} on ${carrier}`, its tests sharing one server: `server` is filled
 * in before the first test runs and closed after the last.
 */
export function describeOnCarriers(title: string, tests: (server: TestServer, carrier: 'uws' | 'node') => void): void {
  for (const carrier of ['uws', 'node'] as const) {
    describe(`${title} on ${carrier}`, () => {
      const server = sharedServer(carrier);
      before(() => assert.equal(server.troupe.server.carrier, carrier));
      tests(server, carrier);
    });
  }
}

export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

/** A failed step's error as the run records it: `failed to execute step "<step>": <the executor's error>`. */
export function stepError(step: string, error: string): string {
  return `failed to execute step ${JSON.stringify(step)}: ${error}`;
}
