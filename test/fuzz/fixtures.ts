// A server for the fuzz suite with DAGs and finished runs (a sub DAG run among them), so that hostile
// input reaches the handlers behind a valid prefix, not only the 404 in front of them.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TroupeConfig } from '../../src/main.ts';
import { startTestServer, type TestServer } from '../helpers.ts';
import { FuzzClient, snapshot } from './harness.ts';

const FIXTURE_SPECS: Record<string, string> = {
  fx: 'steps:\n  - name: a\n    command: echo hi\n    output: OUT\n  - name: b\n    command: "true"\n    depends: [a]\n',
  fxchild: 'steps:\n  - name: c\n    command: "true"\n',
  fxparent: 'steps:\n  - name: call-child\n    call: fxchild\n',
};

/** Valid values for each path parameter: the fixture run of `fx`, and the parent/child pair for sub runs. */
interface FixtureValues {
  plain: Record<string, string>;
  sub: Record<string, string>;
}

export interface FuzzServer {
  server: TestServer;
  client: FuzzClient;
  home: string;
  scratch: string;
  values: FixtureValues;
  /** Puts the fixture DAG files back (the fuzz deletes and renames them). */
  restore(): Promise<void>;
  /** Whether /health answers 200 healthy. */
  healthy(): Promise<boolean>;
  /** Entries that appeared outside the home since the server started. */
  created(): string[];
  close(): Promise<void>;
}

/** `config`: more of the server's configuration (remote nodes for the remoteNode group). */
export async function startFuzzServer(carrier: 'uws' | 'node', config: Partial<TroupeConfig> = {}): Promise<FuzzServer> {
  // The home sits three levels down in its own scratch directory, so a `../..` that escapes the
  // home lands where the snapshot sees it.
  const scratch = await mkdtemp(join(tmpdir(), 'troupe-fuzz-'));
  const home = join(scratch, 'l1', 'l2', 'home');
  await mkdir(home, { recursive: true });
  const before = snapshot(scratch, home);
  const server = await startTestServer(carrier, { ...config, home });
  const client = new FuzzClient(server.troupe.server.port);
  const restore = async () => {
    for (const [name, spec] of Object.entries(FIXTURE_SPECS)) await server.writeDag(name, spec);
  };
  await restore();
  const started = await server.call('POST', '/dags/fx/start', {});
  const parent = await server.call('POST', '/dags/fxparent/start', {});
  if (started.status !== 200 || parent.status !== 200) throw new Error(`fixture runs did not start: ${started.text} ${parent.text}`);
  await server.waitForRun('fx', started.body.dagRunId);
  await server.waitForRun('fxparent', parent.body.dagRunId);
  const subs = await server.call('GET', `/dag-runs/fxparent/${parent.body.dagRunId}/sub-dag-runs`);
  const subDagRunId: string | undefined = subs.body?.subRuns?.[0]?.dagRunId;
  if (!subDagRunId) throw new Error(`fixture sub run missing: ${subs.text}`);
  return {
    server, client, home, scratch, restore,
    values: {
      plain: { fileName: 'fx', name: 'fx', dagRunId: started.body.dagRunId, stepName: 'a', subDagRunId },
      sub: { fileName: 'fxparent', name: 'fxparent', dagRunId: parent.body.dagRunId, stepName: 'c', subDagRunId },
    },
    healthy: async () => {
      try {
        const health = await client.send({ method: 'GET', path: '/api/v2/health' });
        return health.status === 200 && JSON.parse(health.text).status === 'healthy';
      } catch {
        return false;
      }
    },
    created: () => {
      const now = snapshot(scratch, home);
      return [...now].filter((entry) => !before.has(entry));
    },
    close: async () => {
      client.close();
      await server.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
