// A sub DAG run that got its parent's secret in its params is recorded with the secret masked: a
// retry of it alone would run with the mask in place of the value, so it is refused, naming the parent.
// A retry of the parent runs the same sub DAG run again, with the real value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from './helpers.ts';

const SECRET_ENV = 'SUB_DAG_RETRY_TEST_TOKEN';
const SECRET = 'tok-5f2e91c7-retry';

test('a sub DAG run whose params carried a secret is not retried alone; the parent is', async (t) => {
  process.env[SECRET_ENV] = SECRET;
  const server = await startTestServer();
  t.after(async () => {
    delete process.env[SECRET_ENV];
    await server.close();
  });
  const flag = join(server.home, 'secret-child-may-pass');
  await server.writeDag('secret-child', 'params:\n  - TOKEN: none\nsteps:\n  - command: test "$TOKEN" = "' + SECRET + '" -a -f ' + flag + '\n');
  await server.writeDag('secret-parent', [
    'secrets:', '  - name: API_TOKEN', '    provider: env', `    key: ${SECRET_ENV}`,
    'steps:', '  - name: c', '    call: secret-child', '    params: "TOKEN=${API_TOKEN}"', '',
  ].join('\n'));
  const started = await server.call('POST', '/dags/secret-parent/start', {});
  const parent = await server.waitForRun('secret-parent', started.body.dagRunId);
  assert.equal(parent.statusLabel, 'failed');
  const child = parent.nodes[0].subRuns[0];
  assert.match(child.params, /\*{7}/);
  assert.doesNotMatch(child.params, new RegExp(SECRET));

  const alone = await server.call('POST', `/dag-runs/secret-child/${child.dagRunId}/retry`, {});
  assert.equal(alone.status, 400);
  assert.equal(alone.body.code, 'bad_request');
  assert.match(alone.body.message, new RegExp(`retry the parent dag-run ${parent.dagRunId}`));

  await writeFile(flag, '');
  const again = await server.call('POST', `/dag-runs/secret-parent/${parent.dagRunId}/retry`, { stepName: 'c' });
  assert.equal(again.status, 200);
  const rerun = await server.waitForRun('secret-parent', parent.dagRunId, (run) => run.log !== parent.log && ![0, 1, 5].includes(run.status));
  assert.equal(rerun.nodes[0].statusLabel, 'succeeded', 'the child got the real value');
  assert.deepEqual(rerun.nodes[0].subRuns, [child], 'the same sub DAG run, run again');
});
