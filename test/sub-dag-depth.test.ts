// A DAG that calls itself, directly or through others, stops at the nesting limit: the deepest
// calling step fails with a clear error, every run of the tree ends, and the server stays usable.
// A start refuses a call cycle it can see (call-cycles.test.ts); these cycles are closed by hand
// edits of the files after the start, while the root run waits at a gate, as a user may edit them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from './helpers.ts';

/** A step that waits until the test opens the gate, so that the files change before any call runs. */
const gateStep = (server: TestServer) => `  - command: while [ ! -f ${join(server.home, 'gate')} ]; do sleep 0.02; done\n`;
const openGate = (server: TestServer) => writeFile(join(server.home, 'gate'), '');

const LIMIT = 20;

/**
 * The runs of a tree from its root down its first calling step, once every one has ended: the
 * root's details, then each sub DAG run's, read through the root as a client does.
 */
async function settledChain(server: TestServer, name: string, rootId: string): Promise<any[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const chain: any[] = [];
    let details = (await server.call('GET', `/dag-runs/${name}/${rootId}`)).body.dagRun;
    while (details) {
      chain.push(details);
      const child = details.nodes.find((node: any) => node.subRuns?.length > 0)?.subRuns[0];
      details = child ? (await server.call('GET', `/dag-runs/${name}/${rootId}/sub-dag-runs/${child.dagRunId}`)).body.dagRunDetails : undefined;
    }
    if (chain.every((run) => ![0, 1, 5].includes(run.status))) return chain;
    if (Date.now() > deadline) throw new Error(`runs did not end: ${JSON.stringify(chain.map((run) => [run.name, run.statusLabel]))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts `root`, which calls `callee` past the gate, then makes `callee` call `back` (closing the
 * cycle) and opens the gate; the settled chain of runs.
 */
async function closedCycle(server: TestServer, root: string, callee: string, back: string): Promise<any[]> {
  await server.writeDag(root, `steps:\n${gateStep(server)}  - call: ${callee}\n`);
  await server.writeDag(callee, 'steps:\n  - command: "true"\n');
  const started = await server.call('POST', `/dags/${root}/start`, {});
  assert.equal(started.status, 200);
  await server.writeDag(callee, `steps:\n  - call: ${back}\n`);
  await openGate(server);
  return settledChain(server, root, started.body.dagRunId);
}

test('a DAG that calls itself fails its deepest call at the nesting limit and every run ends', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  const chain = await closedCycle(server, 'entry', 'selfcall', 'selfcall');
  assert.equal(chain.length, LIMIT + 1, 'the root and one run per level below it');
  assert.deepEqual(new Set(chain.slice(1).map((run) => run.name)), new Set(['selfcall']));
  assert.deepEqual(new Set(chain.map((run) => run.statusLabel)), new Set(['failed']));
  const deepest = chain.at(-1);
  assert.deepEqual(deepest.nodes[0].subRuns, []);
  assert.match(deepest.nodes[0].error, new RegExp(`nest deeper than ${LIMIT} levels \\(entry -> selfcall -> selfcall -> \\.\\.\\.`));
  const health = await server.call('GET', '/health');
  assert.equal(health.status, 200);
  assert.equal(health.body.status, 'healthy');
});

test('two DAGs that call each other stop at the nesting limit, naming the path', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  const chain = await closedCycle(server, 'pingdag', 'pongdag', 'pingdag');
  assert.equal(chain.length, LIMIT + 1);
  assert.deepEqual(chain.slice(0, 4).map((run) => run.name), ['pingdag', 'pongdag', 'pingdag', 'pongdag']);
  const limitErrors = chain.flatMap((run) => run.nodes.map((node: any) => node.error as string)).filter((error) => error?.includes('nest deeper'));
  assert.equal(limitErrors.length, 1);
  assert.match(limitErrors[0], /\(pingdag -> pongdag -> pingdag -> \.\.\./);
});
