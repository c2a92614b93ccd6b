// A definition near the 1 MiB body limit is parsed on a worker thread: while
// it is validated, created or edited the server answers other requests, and the answer is the one
// the parse on the main thread gave. Definitions above 16 KiB run as before: stored, inline, as
// a sub DAG's parent, retried.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseDag } from '../src/definition/index.ts';
import { nearOneMb } from './near-one-mb.ts';
import { startTestServer, type TestServer } from './helpers.ts';
import { sendAlone as send, type SentAlone } from './raw-http.ts';

/** A `steps:` list near 1 MiB, and how many steps it has before `tail`. */
function stepsNearOneMb(item: (i: number) => string, tail = ''): { spec: string; steps: number } {
  let steps = 0;
  const spec = nearOneMb('steps:\n', item, (count) => {
    steps = count;
    return tail;
  });
  return { spec, steps };
}

/**
 * Health checks one after another, from the moment the request's last byte is written for as long
 * as it is unanswered; how many were answered before it. A parse that holds the event loop lets
 * through at most those answered while the server reads the last bytes; a parse on another
 * thread, a round trip every millisecond or so for as long as it takes.
 */
async function healthChecksDuring(server: TestServer, request: SentAlone): Promise<{ answer: { status: number; body: any }; answeredBefore: number }> {
  let done = false;
  const answer = request.answer.finally(() => { done = true; });
  await request.written;
  let answeredBefore = 0;
  while (!done) {
    const health = await server.call('GET', '/health');
    assert.equal(health.status, 200);
    if (!done) answeredBefore++;
  }
  return { answer: await answer, answeredBefore };
}

/**
 * Far more than a blocked event loop lets through (3 to 25 measured: those answered while the
 * server reads the last bytes), far fewer than a parse's second allows (1,400 to 2,900 measured).
 */
const ANSWERED_WHILE_PARSING = 200;

test('while a 1 MiB spec is validated, created and edited, /health is answered; the answers are the parse\'s', { timeout: 120_000 }, async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  const dagsDir = join(server.home, 'dags');
  const valid = stepsNearOneMb((i) => `  - name: s${i}\n    command: echo ${i}\n`);

  // A first request of this size is slow to arrive whatever its parse costs (the server's first
  // health checks and body reads); it is not the one counted.
  assert.equal((await server.call('POST', '/dags/validate', { spec: valid.spec, name: 'big' })).body.valid, true);
  const validated = await healthChecksDuring(server, send(server.troupe.server.port, 'POST', '/dags/validate', { spec: valid.spec, name: 'big' }));
  assert.ok(validated.answeredBefore >= ANSWERED_WHILE_PARSING, `health answered ${validated.answeredBefore} times before validate`);
  assert.equal(validated.answer.status, 200);
  assert.equal(validated.answer.body.valid, true);
  assert.deepEqual(validated.answer.body.errors, []);
  assert.equal(validated.answer.body.dag.name, 'big');
  assert.equal(validated.answer.body.dag.steps.length, valid.steps);
  assert.deepEqual(validated.answer.body.dag.steps.at(-1).depends, [`s${valid.steps - 2}`]);

  // A problem of the text (with its line), local DAGs after it: the same errors as the inline parse.
  // A call of a DAG that does not exist is no problem of the definition.
  const broken = stepsNearOneMb((i) => `  - name: t${i}\n    command: echo ${i}\n`,
    '  - name: last\n    call: nosuch\n    bogus: 1\n---\nname: helper\nsteps: [echo]\n---\nname: helper\nsteps: [echo]\n');
  const expected = parseDag(broken.spec, { defaultName: 'big', fileName: 'big', baseDir: dagsDir, }).errors;
  assert.equal(expected.length, 1);
  const line = broken.steps * 2 + 2;
  assert.deepEqual(expected, [
    `steps[${broken.steps}].bogus (line ${line + 2}): unknown field "bogus"`,
  ]);
  const invalid = await healthChecksDuring(server, send(server.troupe.server.port, 'POST', '/dags/validate', { spec: broken.spec, name: 'big' }));
  assert.ok(invalid.answeredBefore >= ANSWERED_WHILE_PARSING, `health answered ${invalid.answeredBefore} times before validate`);
  assert.equal(invalid.answer.status, 200);
  assert.equal(invalid.answer.body.valid, false);
  assert.deepEqual(invalid.answer.body.errors, expected);

  const created = await healthChecksDuring(server, send(server.troupe.server.port, 'POST', '/dags', { name: 'big', spec: valid.spec }));
  assert.ok(created.answeredBefore >= ANSWERED_WHILE_PARSING, `health answered ${created.answeredBefore} times before create`);
  assert.equal(created.answer.status, 201);
  // The create had the cron scheduler read the stored file (on the parse thread, inside the
  // window counted above), so reading it now is answered from that parse.
  const stored = await healthChecksDuring(server, send(server.troupe.server.port, 'GET', '/dags/big'));
  assert.equal(stored.answer.body.dag.steps.length, valid.steps);
  assert.deepEqual(stored.answer.body.errors, []);

  const edited = await healthChecksDuring(server, send(server.troupe.server.port, 'PUT', '/dags/big/spec', { spec: broken.spec }));
  assert.ok(edited.answeredBefore >= ANSWERED_WHILE_PARSING, `health answered ${edited.answeredBefore} times before the edit`);
  assert.equal(edited.answer.status, 200);
  assert.deepEqual(edited.answer.body.errors, expected);
  assert.equal((await server.call('GET', '/dags/big/spec')).body.spec, valid.spec);
});

test('a definition above 16 KiB runs stored, inline, as the parent of a sub DAG and retried', { timeout: 60_000 }, async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  // Six thousand variables make the text about 100 KiB: parsed on the worker thread.
  const env = Array.from({ length: 6000 }, (_, i) => `  - K${i}: v${i}\n`).join('');
  const spec = `env:\n${env}steps:\n  - name: main\n    command: echo "$K0 $K5999"\n    output: OUT\n  - name: child\n    call: helper\n---\nname: helper\nsteps:\n  - echo helper\n`;
  assert.ok(spec.length > 96 * 1024);
  assert.equal((await server.call('POST', '/dags', { name: 'wide', spec })).status, 201);

  const started = await server.call('POST', '/dags/wide/start', {});
  assert.equal(started.status, 200, started.text);
  const run = await server.waitForRun('wide', started.body.dagRunId);
  assert.equal(run.statusLabel, 'succeeded');
  assert.equal((await server.call('GET', `/dag-runs/wide/${started.body.dagRunId}/steps/main/log`)).body.content, 'v0 v5999');
  assert.equal(run.nodes[1].subRuns.length, 1);

  const retried = await server.call('POST', `/dag-runs/wide/${started.body.dagRunId}/retry`, {});
  assert.equal(retried.status, 200, retried.text);
  assert.equal((await server.waitForRun('wide', started.body.dagRunId, (record) => record.status !== 1 && record.nodes[0].status === 4 && run.finishedAt !== record.finishedAt)).statusLabel, 'succeeded');

  const inline = await server.call('POST', '/dag-runs', { spec, name: 'wide-inline' });
  assert.equal(inline.status, 200, inline.text);
  assert.equal((await server.waitForRun('wide-inline', inline.body.dagRunId)).statusLabel, 'succeeded');
  const refused = await server.call('POST', '/dag-runs', { spec: `bogus: 1\n${spec}`, name: 'wide-inline' });
  assert.equal(refused.status, 400);
  assert.match(refused.body.message, /^bogus \(line \d+\): unknown field "bogus"/);
});
