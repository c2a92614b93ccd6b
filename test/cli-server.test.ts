// Verbs with a server on the home: the command finds it in the home's lock and talks to it over
// HTTP (or to the one --server names, with a Bearer token when given); stop and Ctrl-C end runs
// cleanly; the same verbs embedded on a home stop the same way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { PASSES, WAITS, makeHome, troupe, troupeChild } from './cli-run.ts';

async function waitingStep(server: TestServer, name: string): Promise<string> {
  let dagRunId = '';
  assert.ok(await waitUntil(async () => {
    const latest = await server.call('GET', `/dag-runs/${name}/latest`);
    dagRunId = latest.body?.dagRun?.dagRunId ?? '';
    return latest.status === 200 && latest.body.dagRun.nodes[0].status === 1;
  }, 20_000), 'the step runs');
  return dagRunId;
}

test('with a server on the home, verbs go to it over HTTP: start, status, enqueue, exec with its output, cleanup', async (t) => {
  const home = await makeHome({ passes: PASSES });
  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  const started = await troupe(['start', 'passes', '-r', 's1', ...home.flag]);
  assert.equal(started.code, 0, started.stderr);
  assert.match(started.stdout, /step second succeeded/);
  assert.match(started.stdout, /dag-run passes s1: succeeded in /);
  assert.equal((await server.call('GET', '/dag-runs/passes/s1')).body.dagRun.status, 4);

  const listing = await troupe(['status', ...home.flag]);
  assert.equal(listing.code, 0);
  assert.match(listing.stdout, /^DAG +RUN ID +STATUS +STARTED +DURATION\npasses +s1 +succeeded +\S+ \S+ +\S+\n$/);

  const queued = await troupe(['enqueue', 'passes', '-r', 'q1', '--json', ...home.flag]);
  assert.deepEqual(JSON.parse(queued.stdout), { name: 'passes', dagRunId: 'q1', queued: true });
  assert.equal((await server.waitForRun('passes', 'q1')).status, 4, 'the server started the queued run');

  // exec shows what the command wrote, read through the step log endpoints: stdout on stdout, stderr on stderr.
  const exec = await troupe(['exec', '-N', 'adhoc', '-r', 'x1', ...home.flag, '--', 'sh', '-c', 'echo out one; echo out two; echo oops >&2; exit 3']);
  assert.equal(exec.code, 1);
  assert.match(exec.stdout, /step run running\nout one\nout two\n\S+ step run failed \(\S+\): failed to execute step "run": exit status 3\ndag-run adhoc x1: failed in \S+\n  failed step run: failed to execute step "run": exit status 3\n/);
  assert.equal(exec.stderr, 'oops\n');
  assert.equal(await server.stepLog('adhoc', 'x1', 'run'), 'out one\nout two');
  const json = await troupe(['exec', '-N', 'adhoc', '-r', 'x2', '--json', ...home.flag, '--', 'sh', '-c', 'echo out; echo err >&2']);
  assert.equal(json.code, 0, json.stderr);
  const events = json.stdout.trim().split('\n').map((line) => JSON.parse(line));
  // stdout and stderr are read apart, each in its order.
  assert.deepEqual(events.filter((event) => event.type === 'output').sort((a, b) => b.stream.localeCompare(a.stream)), [
    { type: 'output', name: 'adhoc', dagRunId: 'x2', step: 'run', stream: 'stdout', content: 'out' },
    { type: 'output', name: 'adhoc', dagRunId: 'x2', step: 'run', stream: 'stderr', content: 'err' },
  ]);
  assert.equal(events[events.length - 1].type, 'summary');

  // cleanup asks the server (POST /dag-runs/cleanup) and says what an embedded cleanup says.
  const stored = async () => (await server.call('GET', '/dag-runs/passes')).body.dagRuns.map((run: { dagRunId: string }) => run.dagRunId).sort();
  assert.deepEqual(await stored(), ['q1', 's1']);
  const preview = await troupe(['cleanup', 'passes', '--dry-run', ...home.flag]);
  assert.equal(preview.code, 0, preview.stderr);
  assert.match(preview.stdout, /^would remove 2 dag-runs \(every finished dag-run of passes\):\n {2}(s1|q1)\n {2}(s1|q1)\n$/);
  assert.deepEqual(await stored(), ['q1', 's1'], 'the dry run removed nothing');
  const kept = await troupe(['cleanup', 'passes', '--retention-days', '30', '--yes', ...home.flag]);
  assert.equal(kept.code, 0, kept.stderr);
  assert.equal(kept.stdout, 'nothing to remove: no dag-runs of passes finished more than 30 days ago\n');
  const unasked = await troupe(['cleanup', 'passes', ...home.flag]);
  assert.equal(unasked.code, 1);
  assert.equal(unasked.stderr, 'troupe: cleanup removes runs for good and there is no terminal to ask: pass --yes to confirm, or --dry-run to see what it would remove\n');
  assert.deepEqual(await stored(), ['q1', 's1']);
  const logs = [(await server.call('GET', '/dag-runs/passes/s1')).body.dagRun.log, (await server.call('GET', '/dag-runs/passes/q1')).body.dagRun.log];
  assert.ok(logs.every((path) => existsSync(path)), JSON.stringify(logs));
  const removed = await troupe(['cleanup', 'passes', '-y', ...home.flag]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(removed.stdout, 'removed 2 dag-runs of passes\n');
  assert.deepEqual(await stored(), []);
  assert.deepEqual(logs.filter((path) => existsSync(path)), [], 'their logs went with them');
  assert.equal((await server.call('GET', '/dag-runs/passes/s1')).status, 404);
  const again = await troupe(['cleanup', 'passes', '-y', '--json', ...home.flag]);
  assert.deepEqual(JSON.parse(again.stdout), { name: 'passes', dryRun: false, dagRunIds: [], removed: 0 });
});

test('--server names a server; a Bearer token from --token or TROUPE_TOKEN reaches it; without one, the fix is named', async (t) => {
  const server = await startTestServer('uws');
  t.after(() => server.close());
  await server.writeDag('passes', PASSES);
  // A gate in front of the real server lets through only requests with the token, as an
  // authenticating server does.
  const seen: string[] = [];
  const gate = createServer((request, response) => {
    seen.push(request.headers.authorization ?? '');
    if (request.headers.authorization !== 'Bearer s3cret') {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'unauthorized', message: 'a token is required' }));
      return;
    }
    const target = new URL(server.base);
    const forwarded = httpRequest({ host: target.hostname, port: target.port, path: request.url, method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  t.after(() => gate.close());
  const url = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;
  const elsewhere = await makeHome();
  t.after(() => elsewhere.remove());

  const refused = await troupe(['status', 'passes', '--server', url, ...elsewhere.flag]);
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr, `troupe: the server at ${url}/api/v2 requires authentication (a token is required): pass --token or set TROUPE_TOKEN\n`);
  const viaFlag = await troupe(['start', 'passes', '-r', 't1', '--server', `${url}/api/v2/`, '--token', 's3cret', ...elsewhere.flag]);
  assert.equal(viaFlag.code, 0, viaFlag.stderr);
  const viaEnv = await troupe(['status', 'passes', '-r', 't1', '--json'], { TROUPE_SERVER: url, TROUPE_TOKEN: 's3cret', TROUPE_HOME: elsewhere.dir });
  assert.equal(viaEnv.code, 0, viaEnv.stderr);
  assert.equal(JSON.parse(viaEnv.stdout).dagRun.statusLabel, 'succeeded');
  assert.ok(seen.includes('Bearer s3cret'));
  assert.equal((await server.call('GET', '/dag-runs/passes/t1')).body.dagRun.status, 4, 'the run is the server\'s');
});

test('over HTTP, stop ends every running run of a DAG and Ctrl-C stops the followed run, saying so; both recorded aborted', async (t) => {
  const home = await makeHome({ waits: WAITS });
  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  const follower = troupeChild(['start', 'waits', ...home.flag]);
  const first = await waitingStep(server, 'waits');
  const stopped = await troupe(['stop', 'waits', ...home.flag]);
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.equal(stopped.stdout, `stopped dag-run waits ${first}\n`);
  const ended = await follower.outcome;
  assert.equal(ended.code, 1);
  assert.match(ended.stdout, new RegExp(`dag-run waits ${first}: aborted in `));
  assert.equal((await server.waitForRun('waits', first)).status, 3);

  const interrupted = troupeChild(['start', 'waits', '-r', 'c1', ...home.flag]);
  await waitingStep(server, 'waits');
  interrupted.child.kill('SIGINT');
  const outcome = await interrupted.outcome;
  assert.equal(outcome.code, 1);
  assert.match(outcome.stderr, /Ctrl-C: stopping dag-run waits c1/);
  assert.match(outcome.stdout, /dag-run waits c1: aborted in \S+ \(stopped by Ctrl-C\)\n/);
  assert.equal((await server.call('GET', '/dag-runs/waits/c1')).body.dagRun.status, 3);
  const noneLeft = await troupe(['stop', 'waits', ...home.flag]);
  assert.equal(noneLeft.stdout, 'no running dag-run of waits\n');
});

test('embedded, Ctrl-C stops the run, the command says so and exits 1; the run is recorded aborted; the Ctrl-C relayed again by npx counts once', async (t) => {
  const home = await makeHome({ waits: WAITS });
  const interrupted = troupeChild(['start', 'waits', '-r', 'e1', ...home.flag]);
  assert.ok(await waitUntil(() => /step wait running/.test(interrupted.output()), 20_000), interrupted.output());
  // From the terminal, and again from npm under `npx troupe`: one Ctrl-C, not a second (exit 130).
  interrupted.child.kill('SIGINT');
  await sleep(50);
  interrupted.child.kill('SIGINT');
  const outcome = await interrupted.outcome;
  assert.equal(outcome.code, 1);
  assert.match(outcome.stdout, /dag-run waits e1: aborted in \S+ \(stopped by Ctrl-C\)\n/);
  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  assert.equal((await server.call('GET', '/dag-runs/waits/e1')).body.dagRun.status, 3);
});

test('SIGTERM to a command following a run (timeout, a cancelled CI job) stops the run as Ctrl-C does, and says so', async (t) => {
  const home = await makeHome({ waits: WAITS });
  t.after(() => home.remove());
  const terminated = troupeChild(['start', 'waits', '-r', 't1', ...home.flag]);
  assert.ok(await waitUntil(() => /step wait running/.test(terminated.output()), 20_000), terminated.output());
  terminated.child.kill('SIGTERM');
  const outcome = await terminated.outcome;
  assert.equal(outcome.code, 1, outcome.stdout + outcome.stderr);
  assert.match(outcome.stderr, /^\nSIGTERM: stopping dag-run waits t1 \(SIGTERM again to leave without waiting for its end\)\n$/);
  assert.match(outcome.stdout, /dag-run waits t1: aborted in \S+ \(stopped by SIGTERM\)\n/);
  const server = await startTestServer('uws', { home: home.dir });
  t.after(() => server.close());
  assert.equal((await server.call('GET', '/dag-runs/waits/t1')).body.dagRun.statusLabel, 'aborted');
});
