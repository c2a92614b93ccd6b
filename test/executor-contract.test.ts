// one contract every executor keeps, as the shell executor does. Exit status to
// node status, stdout and stderr to the step's log files, output capture and maxOutputSize, secret
// masking, timeoutSec, stop and retryPolicy, each checked the same way for every executor, on the
// real server with the real servers the executors talk to (each case starts its own).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';
import type { ContractCase } from './contract/contract-case.ts';
import { shellCase } from './contract/shell.ts';
import { jqCase } from './contract/jq.ts';
import { mailCase } from './contract/mail.ts';
import { sshCase } from './contract/ssh.ts';
import { httpCase } from './contract/http.ts';
import { archiveCase } from './contract/archive.ts';
import { containerCase, dagContainerCase } from './contract/container.ts';

const CASES: ContractCase[] = [shellCase, jqCase, mailCase, sshCase, httpCase, archiveCase, containerCase, dagContainerCase];

const SECRET = 'contract-S3CRET-5be1';
const SECRET_ENV = 'CONTRACT_TEST_TOKEN';
const MASK = '*******';

for (const contract of CASES) {
  describe(`the executor contract: ${contract.name}`, () => {
    let server: TestServer;
    let root = '';
    let stopPeer: () => Promise<void> = async () => {};
    before(async () => {
      process.env[SECRET_ENV] = SECRET;
      const peer = await contract.start();
      root = peer.root;
      stopPeer = peer.stop;
      server = await startTestServer();
    });
    after(async () => {
      await server?.close();
      await stopPeer();
    });

    const prefix = `contract_${contract.name.replace(/[^a-z0-9]/gi, '_')}`;
    /** A DAG of one step `s` with the case's root fields, the secret TOKEN, and `extra` root and step lines, and steps after it. */
    const spec = (step: string, extra: { root?: string[]; step?: string[]; steps?: string[] } = {}) => [
      ...(root ? [root] : []),
      ...(extra.root ?? []),
      'secrets:',
      '  - name: TOKEN',
      '    provider: env',
      `    key: ${SECRET_ENV}`,
      'steps:',
      '  - name: s',
      step,
      ...(extra.step ?? []).map((line) => `    ${line}`),
      ...(extra.steps ?? []),
    ].join('\n');
    const create = async (name: string, text: string) => {
      const created = await server.call('POST', '/dags', { name, spec: text });
      assert.equal(created.status, 201, created.text);
    };
    const runOf = async (name: string, text: string) => {
      await create(name, text);
      return server.startAndWait(name);
    };
    const log = async (name: string, dagRunId: string, stream: 'stdout' | 'stderr') =>
      (await server.call('GET', `/dag-runs/${name}/${dagRunId}/steps/s/log?stream=${stream}`)).body.content as string;

    test('a step that succeeds: node and run succeeded, its text in the stdout log and captured as output', async () => {
      const name = `${prefix}_ok`;
      const run = await runOf(name, spec(contract.steps.prints('contract says hello'), { step: ['output: SAID'] }));
      assert.equal(run.status, 4, JSON.stringify(run.nodes[0]));
      assert.equal(run.nodes[0].status, 4);
      assert.match(await log(name, run.dagRunId, 'stdout'), /contract says hello/);
      const outputs = await server.call('GET', `/dag-runs/${name}/${run.dagRunId}/outputs`);
      assert.match(outputs.body.outputs.said, /contract says hello/);
    });

    test('a step that fails: node failed with its exit code, its message in the stderr log or the error', async () => {
      const name = `${prefix}_fail`;
      const { step, exitCode } = contract.steps.fails('contract failure text');
      // The exit code, as later steps read it: ${id.exitCode}.
      const run = await runOf(name, spec(step, {
        step: ['id: failing', 'continueOn:', '  failure: true'],
        steps: ['  - name: after', '    depends: s', '    command: echo "code=${failing.exitCode}"'],
      }));
      assert.equal(run.nodes[0].status, 2, JSON.stringify(run.nodes[0]));
      const stderr = await log(name, run.dagRunId, 'stderr');
      assert.ok(`${stderr}\n${run.nodes[0].error}`.includes('contract failure text'), `stderr: ${stderr}; error: ${run.nodes[0].error}`);
      assert.match(await server.stepLog(name, run.dagRunId, 'after'), new RegExp(`code=${exitCode}\\b`));
    });

    test('a secret in what the step prints is masked in the log and the output', async () => {
      const name = `${prefix}_secret`;
      const run = await runOf(name, spec(contract.steps.prints('token ${TOKEN} end'), { step: ['output: TOLD'] }));
      assert.equal(run.status, 4, JSON.stringify(run.nodes[0]));
      const stdout = await log(name, run.dagRunId, 'stdout');
      assert.ok(stdout.includes(`token ${MASK} end`), stdout);
      assert.ok(!stdout.includes(SECRET));
      const outputs = await server.call('GET', `/dag-runs/${name}/${run.dagRunId}/outputs`);
      assert.ok(!outputs.text.includes(SECRET));
      assert.match(outputs.body.outputs.told, /token \*{7} end/);
    });

    test('captured output over maxOutputSize fails the step', async () => {
      const name = `${prefix}_big`;
      const run = await runOf(name, spec(contract.steps.printsBytes(5000), { root: ['maxOutputSize: 1000'], step: ['output: BIG'] }));
      assert.equal(run.nodes[0].status, 2, JSON.stringify(run.nodes[0]));
      assert.match(run.nodes[0].error, /maxOutputSize \(1000 bytes\)/);
    });

    test('timeoutSec ends a step that runs on: node failed, the error says it timed out', async () => {
      const name = `${prefix}_timeout`;
      const run = await runOf(name, spec(contract.steps.waits(), { step: ['timeoutSec: 1'] }));
      assert.equal(run.status, 2);
      assert.equal(run.nodes[0].status, 2);
      assert.match(run.nodes[0].error, /timed out after 1s/);
    });

    test('a stop ends a running step: run and node aborted', async () => {
      const name = `${prefix}_stop`;
      await create(name, spec(contract.steps.waits()));
      const started = await server.call('POST', `/dags/${name}/start`, {});
      assert.equal(started.status, 200, started.text);
      const { dagRunId } = started.body;
      assert.ok(await waitUntil(async () => (await server.call('GET', `/dag-runs/${name}/${dagRunId}`)).body.dagRun.nodes[0].status === 1));
      const stopped = await server.call('POST', `/dag-runs/${name}/${dagRunId}/stop`);
      assert.equal(stopped.status, 200, stopped.text);
      const run = await server.waitForRun(name, dagRunId);
      assert.equal(run.status, 3);
      assert.equal(run.nodes[0].status, 3, JSON.stringify(run.nodes[0]));
    });

    test('retryPolicy runs a failing step again, up to its limit', async () => {
      const name = `${prefix}_retry`;
      const run = await runOf(name, spec(contract.steps.fails('retried failure').step, { step: ['retryPolicy:', '  limit: 2', '  intervalSec: 0'] }));
      assert.equal(run.nodes[0].status, 2);
      assert.equal(run.nodes[0].retryCount, 2);
    });
  });
}
