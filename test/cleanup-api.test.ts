// POST /dag-runs/cleanup (troupe): history removed by hand through the API, as `troupe cleanup`
// asks for it. Finished runs older than the retention go with their sub DAG runs and log files; a
// dry run only lists them; a run running or queued is kept; a bad body is 400. The server's clock
// is moved back to create the old runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';

const DAY_MS = 86_400_000;

async function finishedRun(server: TestServer, fileName: string, dagRunId: string): Promise<any> {
  const run = await server.startAndWait(fileName, { dagRunId });
  assert.equal(run.statusLabel, 'succeeded', JSON.stringify(run));
  // The run log is created as the run ends, just after its final record is durable.
  assert.ok(await waitUntil(() => existsSync(run.log)), run.log);
  return run;
}

function filesOf(run: any): string[] {
  return [run.log, ...run.nodes.flatMap((node: any) => [node.stdout, node.stderr])].filter((path: string) => path !== '' && existsSync(path));
}

const ids = async (server: TestServer, name: string) => (await server.call('GET', `/dag-runs/${name}`)).body.dagRuns.map((run: any) => run.dagRunId).sort();

test('POST /dag-runs/cleanup: bad bodies are 400; a dry run removes nothing; old runs go with sub runs and logs; running and queued runs stay', async (t) => {
  let offsetMs = -10 * DAY_MS;
  const server = await startTestServer('uws', { clock: { now: () => Date.now() + offsetMs } });
  t.after(() => server.close());
  await server.writeDag('cl-parent', 'steps:\n  - name: hello\n    command: echo parent\n  - name: sub\n    call: cl-leaf\n    depends: [hello]\n');
  await server.writeDag('cl-leaf', 'steps:\n  - name: leaf\n    command: echo leaf\n');
  await server.writeDag('cl-other', 'steps:\n  - name: hello\n    command: echo other\n');
  await server.writeDag('cl-waits', 'steps:\n  - name: wait\n    command: sleep 60\n');

  for (const body of [undefined, {}, [], { retentionDays: -1 }, { retentionDays: 1.5 }, { retentionDays: '3' }, { retentionDays: 1, dryRun: 'yes' }, { retentionDays: 1, name: '' }]) {
    const refused = await server.call('POST', '/dag-runs/cleanup', body);
    assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
    assert.equal(refused.body.code, 'bad_request');
  }

  // Ten days ago.
  const oldParent = await finishedRun(server, 'cl-parent', 'old-parent');
  const subRunId = oldParent.nodes[1].subRuns[0].dagRunId;
  const oldSub = (await server.call('GET', `/dag-runs/cl-parent/old-parent/sub-dag-runs/${subRunId}`)).body.dagRunDetails;
  assert.ok(await waitUntil(() => existsSync(oldSub.log)), oldSub.log);
  const oldOther = await finishedRun(server, 'cl-other', 'old-other');
  const oldFiles = [...filesOf(oldParent), ...filesOf(oldSub)];
  assert.ok(oldFiles.includes(oldParent.nodes[0].stdout) && oldFiles.includes(oldSub.log), JSON.stringify(oldFiles));
  // Now: one run that finishes, one that runs, one queued behind it (maxActiveRuns 1).
  offsetMs = 0;
  const newParent = await finishedRun(server, 'cl-parent', 'new-parent');
  assert.equal((await server.call('POST', '/dags/cl-waits/start', { dagRunId: 'running' })).status, 200);
  await server.waitForRun('cl-waits', 'running', (run) => run.statusLabel === 'running');
  assert.equal((await server.call('POST', '/dags/cl-waits/enqueue', { dagRunId: 'queued' })).status, 200);
  assert.equal((await server.waitForRun('cl-waits', 'queued', (run) => run.statusLabel === 'queued')).statusLabel, 'queued');

  const dry = await server.call('POST', '/dag-runs/cleanup', { retentionDays: 5, dryRun: true });
  assert.equal(dry.status, 200, dry.text);
  assert.equal(dry.body.dryRun, true);
  assert.equal(dry.body.removed, 0);
  assert.deepEqual(dry.body.dagRuns.sort((a: any, b: any) => a.name.localeCompare(b.name)),
    [{ name: 'cl-other', dagRunId: 'old-other' }, { name: 'cl-parent', dagRunId: 'old-parent' }]);
  assert.deepEqual(await ids(server, 'cl-parent'), ['new-parent', 'old-parent'], 'the dry run removed nothing');
  assert.deepEqual(oldFiles.filter((path) => !existsSync(path)), []);

  // One DAG name, older than 5 days: the old parent run and its sub run, not the other DAG's.
  const one = await server.call('POST', '/dag-runs/cleanup', { retentionDays: 5, name: 'cl-parent' });
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(one.body, { dryRun: false, dagRuns: [{ name: 'cl-parent', dagRunId: 'old-parent' }], removed: 2 });
  assert.deepEqual(await ids(server, 'cl-parent'), ['new-parent']);
  assert.equal((await server.call('GET', '/dag-runs/cl-parent/old-parent')).status, 404);
  assert.equal(server.troupe.runs.get('cl-leaf', subRunId), undefined);
  assert.deepEqual(oldFiles.filter((path) => existsSync(path)), [], 'its log files are gone');
  assert.deepEqual(await ids(server, 'cl-other'), ['old-other']);
  assert.ok(filesOf(oldOther).includes(oldOther.log));

  // Every DAG, 0 days: every finished run; the running and the queued run stay as they are.
  const all = await server.call('POST', '/dag-runs/cleanup', { retentionDays: 0 });
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(all.body.dagRuns.map((run: any) => run.dagRunId).sort(), ['new-parent', 'old-other']);
  assert.equal(all.body.removed, 3);
  assert.deepEqual(await ids(server, 'cl-parent'), []);
  assert.deepEqual(filesOf(newParent), []);
  assert.equal((await server.call('GET', '/dag-runs/cl-waits/running')).body.dagRun.statusLabel, 'running');
  assert.equal((await server.call('GET', '/dag-runs/cl-waits/queued')).body.dagRun.statusLabel, 'queued');
  assert.equal((await server.call('POST', '/dag-runs/cl-waits/running/stop')).status, 200);
  await server.waitForRun('cl-waits', 'running');
});
