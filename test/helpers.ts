// Boots the real wiring (LMDB in a temp dir, the real pool, a real server on a loopback port).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTroupe, homePaths, type Troupe, type TroupeConfig } from '../src/main.ts';

export interface TestServer {
  base: string;
  home: string;
  troupe: Troupe;
  close(): Promise<void>;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string; headers: Headers }>;
  writeDag(fileName: string, spec: string): Promise<void>;
  waitForRun(name: string, dagRunId: string, done?: (run: any) => boolean): Promise<any>;
}

/** `config.home`: a directory to use instead of a new temporary one (removed on close all the same). */
export async function startTestServer(carrier: 'uws' | 'node' = 'uws', config: Partial<TroupeConfig> = {}): Promise<TestServer> {
  const home = config.home ?? await mkdtemp(join(tmpdir(), 'troupe-test-'));
  const troupe = await startTroupe({ host: '127.0.0.1', port: 0, ...homePaths(home), carrier, maxThreads: 2, ...config, home });
  const base = `http://127.0.0.1:${troupe.server.port}/api/v2`;
  const call: TestServer['call'] = async (method, path, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
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
  return {
    base, home, troupe, call, waitForRun,
    writeDag: (fileName, spec) => writeFile(join(home, 'dags', `${fileName}.yaml`), spec),
    close: async () => {
      await troupe.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}
