// The first read of a large run's details after the server starts (docs/api.md, Large runs): the
// run is stored but not in memory, so it is decoded and encoded on the run-details thread. The
// answer is byte for byte what the main thread's encoder makes of the same stored record, on both
// carriers, and the main thread neither decoded the run (the store does not hold it) nor encoded
// any of its nodes. Timing is never asserted here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../src/core/index.ts';
import { homePaths } from '../src/main.ts';
import { LmdbRunStore } from '../src/store/index.ts';
import { nodeBlocksEncoded, runDetailsDocument } from '../src/http/present.ts';
import { startTestServer } from './helpers.ts';

/** A GET with these headers, the body as the server sent it (undici's request never unzips). */
async function raw(url: string, headers: Record<string, string> = {}) {
  const response = await request(url, { headers });
  return { status: response.statusCode, headers: response.headers as Record<string, string>, body: Buffer.from(await response.body.arrayBuffer()) };
}

const STEPS = 10_000;

function bigRun(name: string, dagRunId: string): RunRecord {
  const nodes: NodeRecord[] = Array.from({ length: STEPS }, (_, index) => ({
    step: { name: `s${index}`, command: 'true', args: [], ...(index > 0 ? { depends: [`s${index - 1}`] } : {}), executorConfig: { type: 'shell', config: {} } },
    stdout: `/logs/s${index}.out`, stderr: `/logs/s${index}.err`, startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:01.000Z',
    status: index % 3 === 0 ? NodeStatus.Failed : NodeStatus.Succeeded, retryCount: 0, doneCount: 1,
    error: index === 4321 ? 'échec "cité"\n' : '', subRuns: [], subRunsRepeated: [],
  }));
  return {
    name, dagRunId, attemptId: 'a1', rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: RunStatus.Failed, queuedAt: '', startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:02.000Z', log: '/logs/run.log',
    params: '{}', nodes, fileName: name, createdAtMs: Date.now(),
    handlers: { onExit: { ...nodes[1], step: { name: 'onExit', command: 'true', executorConfig: { type: 'shell', config: {} } } } },
  };
}

/** A home whose store holds the run, written by a store of its own: the server starts without it in memory. */
async function seededHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'troupe-test-'));
  const paths = homePaths(home);
  await mkdir(paths.dagsDir, { recursive: true });
  const store = new LmdbRunStore(paths.dataDir);
  await store.save(bigRun('big-first', 'r1'));
  await store.close();
  return home;
}

for (const carrier of ['uws', 'node'] as const) {
  test(`on ${carrier}, the first read of a stored run of 10,000 nodes is made off the main thread, byte for byte as the main thread makes it`, async () => {
    const server = await startTestServer(carrier, { home: await seededHome() });
    try {
      const runs = server.troupe.runs;
      const encoded = nodeBlocksEncoded();
      const first = await server.call('GET', '/dag-runs/big-first/r1');
      assert.equal(first.status, 200);
      assert.equal(nodeBlocksEncoded(), encoded, 'the main thread encoded nodes of the run');
      assert.ok(runs.locate('big-first', 'r1') && 'stored' in runs.locate('big-first', 'r1')!, 'the main thread decoded the run');
      const latest = await server.call('GET', '/dag-runs/big-first/latest');
      assert.equal(latest.text, first.text);
      await server.writeDag('big-first', 'steps:\n  - name: s0\n    command: "true"\n');
      const ofDag = await server.call('GET', '/dags/big-first/dag-runs/r1');
      assert.equal(nodeBlocksEncoded(), encoded, 'the main thread encoded nodes of the run');

      // The main thread's encoder, on the record it decodes from the same store.
      const record = runs.get('big-first', 'r1')!;
      assert.equal(record.nodes.length, STEPS);
      const expected = await runDetailsDocument(record, ['dagRun', 'dagRunDetails']);
      assert.ok(Buffer.from(first.text).equals(expected), 'the answer differs from the main thread encoder\'s');
      assert.equal(first.body.dagRun.nodes[4321].error, 'échec "cité"\n');
      assert.ok(Buffer.from(ofDag.text).equals(await runDetailsDocument(record, ['dagRun'])));
      // Held in memory now: answered from the record, the same bytes.
      const again = await server.call('GET', '/dag-runs/big-first/r1');
      assert.equal(again.text, first.text);

      const missing = await server.call('GET', '/dag-runs/big-first/r2');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'not_found');
    } finally {
      await server.close();
    }
  });
}

for (const carrier of ['uws', 'node'] as const) {
  test(`on ${carrier}, a large run's details are gzipped for a client that accepts gzip, and sent as they are for one that does not`, async () => {
    const server = await startTestServer(carrier, { home: await seededHome() });
    try {
      const url = `${server.base}/dag-runs/big-first/r1`;
      // The first read (the run-details thread's answer), then one from memory: both gzipped alike.
      const zipped = await raw(url, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(zipped.status, 200);
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(zipped.headers.vary, 'accept-encoding');
      assert.equal(zipped.headers['content-type'], 'application/json');
      const plain = await raw(url);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers.vary, 'accept-encoding');
      assert.ok(zipped.body.length * 10 < plain.body.length, `gzip left ${zipped.body.length} of ${plain.body.length} bytes`);
      assert.ok(gunzipSync(zipped.body).equals(plain.body));
      assert.equal(JSON.parse(plain.body.toString()).dagRun.nodes.length, STEPS);
      const again = await raw(url, { 'accept-encoding': 'gzip' });
      assert.ok(again.body.equals(zipped.body));
      // Refused by weight, or only other codings accepted: as it is.
      for (const refusing of ['gzip;q=0', 'br, deflate', '*, gzip;q=0', 'identity']) {
        const answer = await raw(url, { 'accept-encoding': refusing });
        assert.equal(answer.headers['content-encoding'], undefined, refusing);
        assert.ok(answer.body.equals(plain.body), refusing);
      }
      assert.equal((await raw(url, { 'accept-encoding': '*' })).headers['content-encoding'], 'gzip');
      // A small answer is never compressed.
      const small = await raw(`${server.base}/dag-runs/big-first/r2`, { 'accept-encoding': 'gzip' });
      assert.equal(small.status, 404);
      assert.equal(small.headers['content-encoding'], undefined);
      assert.equal(JSON.parse(small.body.toString()).code, 'not_found');
    } finally {
      await server.close();
    }
  });
}
