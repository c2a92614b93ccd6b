// A DAG's workerSelector on a server that runs every DAG run itself: the run runs here, and its
// log says that the selector chose nothing; GET /workers answers Dagu's shape with no worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.ts';

test('a workerSelector is ignored: the run runs here and its log says so; GET /workers lists no worker', async () => {
  const server = await startTestServer('node');
  try {
    await server.writeDag('gpu-job', 'workerSelector:\n  gpu: "true"\n  zone: eu-west\nsteps:\n  - name: s1\n    command: echo ran here\n');
    await server.writeDag('plain-job', 'steps:\n  - name: s1\n    command: echo ran here\n');
    for (const name of ['gpu-job', 'plain-job']) {
      const run = await server.startAndWait(name);
      assert.equal(run.statusLabel, 'succeeded', name);
      assert.equal(await server.stepLog(name, run.dagRunId, 's1'), 'ran here');
      const lines = (await server.call('GET', `/dag-runs/${name}/${run.dagRunId}/log`)).body.content.split('\n');
      assert.match(lines[0], /msg="DAG run started"/);
      if (name === 'gpu-job') {
        assert.match(lines[1], /level=WARN msg="workerSelector ignored: this server runs the DAG run itself, on no worker" dag=gpu-job .*worker-selector="gpu=true,zone=eu-west"$/);
      } else {
        assert.ok(!lines.some((line: string) => line.includes('workerSelector')), lines.join('\n'));
      }
    }
    const workers = await server.call('GET', '/workers');
    assert.equal(workers.status, 200);
    assert.deepEqual(workers.body, { workers: [], errors: [] });
  } finally {
    await server.close();
  }
});
