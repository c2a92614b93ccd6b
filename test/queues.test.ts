// Queues on the real server: enqueue (stored and inline), dequeue, reschedule, GET /queues, custom
// queues and their live limit, FIFO order, limits under a storm, suspended DAGs, and a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';

/** A DAG whose one step waits until `gate` exists, then appends the run's id to `trail`. */
function gated(gate: string, trail: string, extra = '') {
  return `${extra}env:\n  - GATE: ${gate}\n  - TRAIL: ${trail}\nsteps:\n  - name: wait\n    command: while [ ! -e "$GATE" ]; do sleep 0.02; done; echo "$DAG_RUN_ID" >> "$TRAIL"\n`;
}

async function queueOf(server: TestServer, name: string) {
  const response = await server.call('GET', '/queues');
  assert.equal(response.status, 200);
  return response.body.queues.find((queue: { name: string }) => queue.name === name);
}

describe('queues', () => {
  let server: TestServer;
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'troupe-queue-gates-'));
    server = await startTestServer('uws', { queues: [{ name: 'cfq', maxConcurrency: 2 }] });
  });
  after(async () => {
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  });

  test('a queued run is status 5 with queuedAt and not-started nodes, listed everywhere, and starts when a slot frees', async () => {
    const gate = join(scratch, 'g1');
    await server.writeDag('q1', gated(gate, join(scratch, 't1')));
    const first = await server.call('POST', '/dags/q1/enqueue', { dagRunId: 'first' });
    assert.deepEqual([first.status, first.body], [200, { dagRunId: 'first' }]);
    await server.waitForRun('q1', 'first', (run) => run.status === 1);
    const second = await server.call('POST', '/dags/q1/enqueue', { dagRunId: 'second', params: 'X=1' });
    assert.equal(second.status, 200);
    const queued = (await server.call('GET', '/dag-runs/q1/second')).body.dagRun;
    assert.equal(queued.status, 5);
    assert.equal(queued.statusLabel, 'queued');
    assert.ok(Number.isFinite(Date.parse(queued.queuedAt)), queued.queuedAt);
    assert.equal(queued.startedAt, '');
    assert.deepEqual(queued.nodes.map((node: any) => [node.status, node.startedAt, node.finishedAt]), [[0, '', '']]);
    assert.deepEqual((await server.call('GET', '/dag-runs?status=5&name=q1')).body.dagRuns.map((run: any) => run.dagRunId), ['second']);
    assert.ok((await server.call('GET', '/dags/q1/dag-runs')).body.dagRuns.some((run: any) => run.dagRunId === 'second'));
    const queue = await queueOf(server, 'q1');
    assert.equal(queue.type, 'dag-based');
    assert.equal('maxConcurrency' in queue, false);
    assert.deepEqual(queue.summary, { running: 1, queued: 1, total: 2 });
    assert.deepEqual(queue.runningDAGRuns.map((run: any) => [run.dagRunId, run.status]), [['first', 1]]);
    assert.deepEqual(queue.queuedDAGRuns.map((run: any) => [run.dagRunId, run.status, run.statusLabel, run.waitingFor]), [['second', 5, 'queued', 'maxActiveRuns']]);
    assert.deepEqual(Object.keys(queue.queuedDAGRuns[0]).sort(), ['dagRunId', 'finishedAt', 'log', 'name', 'startedAt', 'status', 'statusLabel', 'waitingFor']);
    assert.equal(typeof queue.oldestQueuedAgeSec, 'number');
    await writeFile(gate, '');
    const done = await server.waitForRun('q1', 'second');
    assert.equal(done.status, 4);
    assert.equal(done.queuedAt, queued.queuedAt, 'the run keeps the time it was queued');
    assert.notEqual(done.startedAt, '');
    assert.equal(JSON.parse(done.params).X, '1');
    assert.equal(await queueOf(server, 'q1'), undefined, 'an empty DAG queue is not listed');
  });

  test('each queue is served first in, first out', async () => {
    const gate = join(scratch, 'g2');
    const trail = join(scratch, 't2');
    await server.writeDag('fifo', gated(gate, trail));
    const ids = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'];
    for (const id of ids) { const r = await server.call("POST", "/dags/fifo/enqueue", { dagRunId: id }); assert.equal(r.status, 200, r.text); }
    await writeFile(gate, '');
    for (const id of ids) assert.equal((await server.waitForRun('fifo', id)).status, 4);
    assert.deepEqual((await readFile(trail, 'utf8')).trim().split('\n'), ids);
  });

  test('dequeue takes a queued run out, recorded aborted; anything not queued is 404', async () => {
    const gate = join(scratch, 'g3');
    await server.writeDag('deq', gated(gate, join(scratch, 't3')));
    await server.call('POST', '/dags/deq/enqueue', { dagRunId: 'busy' });
    await server.waitForRun('deq', 'busy', (run) => run.status === 1);
    await server.call('POST', '/dags/deq/enqueue', { dagRunId: 'waiting' });
    const removed = await server.call('GET', '/dag-runs/deq/waiting/dequeue');
    assert.equal(removed.status, 200);
    const record = (await server.call('GET', '/dag-runs/deq/waiting')).body.dagRun;
    assert.deepEqual([record.status, record.statusLabel], [3, 'aborted']);
    assert.notEqual(record.finishedAt, '');
    assert.deepEqual((await queueOf(server, 'deq')).queuedDAGRuns, []);
    for (const path of ['/dag-runs/deq/waiting/dequeue', '/dag-runs/deq/busy/dequeue', '/dag-runs/deq/nope/dequeue', '/dag-runs/nodag/x/dequeue']) {
      const response = await server.call('GET', path);
      assert.deepEqual([response.status, response.body.code], [404, 'not_found'], path);
    }
    await writeFile(gate, '');
    assert.equal((await server.waitForRun('deq', 'busy')).status, 4);
    assert.equal((await server.call('GET', '/dag-runs/deq/waiting')).body.dagRun.status, 3, 'a dequeued run never starts');
  });

  test('dequeue of latest takes out the DAG\'s newest run when it is queued', async () => {
    const gate = join(scratch, 'g7');
    await server.writeDag('deqlatest', gated(gate, join(scratch, 't7')));
    await server.call('POST', '/dags/deqlatest/enqueue', { dagRunId: 'running' });
    await server.waitForRun('deqlatest', 'running', (run) => run.status === 1);
    await server.call('POST', '/dags/deqlatest/enqueue', { dagRunId: 'newest' });
    const removed = await server.call('GET', '/dag-runs/deqlatest/latest/dequeue');
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await server.call('GET', '/dag-runs/deqlatest/newest')).body.dagRun.status, 3);
    const again = await server.call('GET', '/dag-runs/deqlatest/latest/dequeue');
    assert.deepEqual([again.status, again.body.code], [404, 'not_found']);
    await writeFile(gate, '');
    assert.equal((await server.waitForRun('deqlatest', 'running')).status, 4);
  });

  test('enqueue errors: singleton, taken id, bad names, unknown DAG, bad params, no spec', async () => {
    const gate = join(scratch, 'g4');
    await server.writeDag('errs', gated(gate, join(scratch, 't4')));
    await server.call('POST', '/dags/errs/enqueue', { dagRunId: 'one' });
    await server.waitForRun('errs', 'one', (run) => run.status === 1);
    const cases: Array<[string, string, unknown, number, string]> = [
      ['POST', '/dags/errs/enqueue', { singleton: true }, 409, 'max_run_reached'],
      ['POST', '/dags/errs/enqueue', { dagRunId: 'one' }, 409, 'already_exists'],
      ['POST', '/dags/errs/enqueue', { dagName: 'bad name' }, 400, 'bad_request'],
      ['POST', '/dags/errs/enqueue', { queue: 'no/slash' }, 400, 'bad_request'],
      ['POST', '/dags/errs/enqueue', { params: '{"unterminated' }, 400, 'bad_request'],
      ['POST', '/dags/errs/enqueue', { singleton: 'yes' }, 400, 'bad_request'],
      ['POST', '/dags/missing/enqueue', {}, 404, 'not_found'],
      ['POST', '/dag-runs/enqueue', {}, 400, 'bad_request'],
      ['POST', '/dag-runs/enqueue', { spec: 'steps:\n  - command: echo x\n' }, 400, 'bad_request'],
      ['POST', '/dag-runs/enqueue', { spec: 'steps: [[[', name: 'inl' }, 400, 'bad_request'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const response = await server.call(method, path, body);
      assert.deepEqual([response.status, response.body?.code], [status, code], `${path} ${JSON.stringify(body)}: ${response.text}`);
    }
    const queued = await server.call('POST', '/dags/errs/enqueue', { dagRunId: 'two' });
    assert.equal(queued.status, 200);
    const singleton = await server.call('POST', '/dags/errs/start', { singleton: true });
    assert.deepEqual([singleton.status, singleton.body.code], [409, 'already_running']);
    await writeFile(gate, '');
    assert.equal((await server.waitForRun('errs', 'two')).status, 4);
  });

  test('an inline spec is enqueued under its name and runs; its id cannot be taken twice', async () => {
    const spec = 'steps:\n  - name: a\n    command: echo inline-queued\n';
    const response = await server.call('POST', '/dag-runs/enqueue', { spec, name: 'inlineq', dagRunId: 'iq1' });
    assert.deepEqual([response.status, response.body], [200, { dagRunId: 'iq1' }]);
    const again = await server.call('POST', '/dag-runs/enqueue', { spec, name: 'inlineq', dagRunId: 'iq1' });
    assert.deepEqual([again.status, again.body.code], [409, 'already_exists']);
    const run = await server.waitForRun('inlineq', 'iq1');
    assert.equal(run.status, 4);
    assert.notEqual(run.queuedAt, '');
    assert.match(await server.stepLog('inlineq', 'iq1', 'a'), /inline-queued/);
  });

  test('an inline enqueue is refused with 409 while its DAG has a run queued or maxActiveRuns runs active; the spec\'s own name wins over the request\'s', async () => {
    const gate = join(scratch, 'g-inline');
    const spec = gated(gate, join(scratch, 't-inline'), 'name: inline-busy\nmaxActiveRuns: 1\n');
    // The spec names itself: the request's name is for a spec without one.
    const first = await server.call('POST', '/dag-runs/enqueue', { spec, name: 'other-name', dagRunId: 'ib1' });
    assert.deepEqual([first.status, first.body], [200, { dagRunId: 'ib1' }]);
    assert.equal((await server.waitForRun('inline-busy', 'ib1', (run) => run.status === 1)).name, 'inline-busy');
    assert.equal((await server.call('GET', '/dag-runs/other-name')).body.dagRuns.length, 0);
    // Its one run is active: maxActiveRuns is reached.
    const whileActive = await server.call('POST', '/dag-runs/enqueue', { spec, dagRunId: 'ib2' });
    assert.deepEqual([whileActive.status, whileActive.body.code], [409, 'max_run_reached']);
    assert.match(whileActive.body.message, /maxActiveRuns/);
    // A stored enqueue of the same name waits behind it; an inline one is then refused for the queued run.
    await server.writeDag('inline-busy', spec);
    assert.equal((await server.call('POST', '/dags/inline-busy/enqueue', { dagRunId: 'ib3' })).status, 200);
    const unlimited = spec.replace('maxActiveRuns: 1', 'maxActiveRuns: -1');
    const whileQueued = await server.call('POST', '/dag-runs/enqueue', { spec: unlimited, dagRunId: 'ib4' });
    assert.deepEqual([whileQueued.status, whileQueued.body.code], [409, 'max_run_reached']);
    assert.match(whileQueued.body.message, /queued/);
    await writeFile(gate, '');
    assert.equal((await server.waitForRun('inline-busy', 'ib3')).status, 4);
    // Nothing of its DAG active or queued: taken, and a spec without a name takes the request's.
    assert.equal((await server.call('POST', '/dag-runs/enqueue', { spec, dagRunId: 'ib5' })).status, 200);
    assert.equal((await server.waitForRun('inline-busy', 'ib5')).status, 4);
    const nameless = await server.call('POST', '/dag-runs/enqueue', { spec: 'steps:\n  - name: a\n    command: "true"\n', name: 'named-by-request' });
    assert.equal(nameless.status, 200, nameless.text);
    assert.equal((await server.waitForRun('named-by-request', nameless.body.dagRunId)).status, 4);
    for (const id of ['ib2', 'ib4']) assert.equal((await server.call('GET', `/dag-runs/inline-busy/${id}`)).status, 404);
  });

  test('a custom queue holds to its maxConcurrency, says why runs wait, and takes a new limit at once', async () => {
    const gate = join(scratch, 'g5');
    await server.writeDag('cq', gated(gate, join(scratch, 't5'), 'queue: cfq\nmaxActiveRuns: -1\n'));
    const ids = Array.from({ length: 6 }, (_, index) => `c${index}`);
    for (const id of ids) assert.equal((await server.call('POST', '/dags/cq/enqueue', { dagRunId: id })).status, 200);
    await waitUntil(async () => (await queueOf(server, 'cfq')).summary.running === 2);
    let queue = await queueOf(server, 'cfq');
    assert.deepEqual([queue.type, queue.maxConcurrency, queue.summary], ['custom', 2, { running: 2, queued: 4, total: 6 }]);
    assert.deepEqual(queue.queuedDAGRuns.map((run: any) => run.waitingFor), ['queue', 'queue', 'queue', 'queue']);
    const raised = await server.call('PATCH', '/queues/cfq', { maxConcurrency: 4 });
    assert.equal(raised.status, 200);
    assert.equal(raised.body.maxConcurrency, 4);
    await waitUntil(async () => (await queueOf(server, 'cfq')).summary.running === 4);
    queue = await queueOf(server, 'cfq');
    assert.deepEqual(queue.summary, { running: 4, queued: 2, total: 6 });
    for (const [body, status, code] of [[{ maxConcurrency: 0 }, 400, 'bad_request'], [{ maxConcurrency: 'x' }, 400, 'bad_request'], [{}, 400, 'bad_request']] as const) {
      const response = await server.call('PATCH', '/queues/cfq', body);
      assert.deepEqual([response.status, response.body.code], [status, code]);
    }
    const unknown = await server.call('PATCH', '/queues/cq', { maxConcurrency: 3 });
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'not_found']);
    // Lowered below what runs: the running runs go on, nothing more starts until they are under it.
    assert.equal((await server.call('PATCH', '/queues/cfq', { maxConcurrency: 1 })).status, 200);
    await writeFile(gate, '');
    for (const id of ids) assert.equal((await server.waitForRun('cq', id)).status, 4);
    assert.equal((await server.call('PATCH', '/queues/cfq', { maxConcurrency: 2 })).status, 200);
  });

  test('a queued run of a suspended DAG waits, and starts when the DAG is resumed', async () => {
    await server.writeDag('paused', 'steps:\n  - name: a\n    command: echo resumed\n');
    assert.equal((await server.call('POST', '/dags/paused/suspend', { suspend: true })).status, 200);
    assert.equal((await server.call('POST', '/dags/paused/enqueue', { dagRunId: 'p1' })).status, 200);
    const queue = await queueOf(server, 'paused');
    assert.deepEqual(queue.queuedDAGRuns.map((run: any) => [run.dagRunId, run.waitingFor]), [['p1', 'suspended']]);
    assert.equal((await server.call('GET', '/dag-runs/paused/p1')).body.dagRun.status, 5);
    assert.equal((await server.call('POST', '/dags/paused/suspend', { suspend: false })).status, 200);
    assert.equal((await server.waitForRun('paused', 'p1')).status, 4);
  });

  test('reschedule runs a finished run again with its params, as a singleton', async () => {
    await server.writeDag('again', 'params:\n  - WHO: nobody\nsteps:\n  - name: a\n    command: echo hi $WHO\n');
    const first = await server.startAndWait('again', { params: '{"WHO":"api"}', dagRunId: 'orig' });
    assert.equal(first.status, 4);
    const rescheduled = await server.call('POST', '/dag-runs/again/orig/reschedule', {});
    assert.equal(rescheduled.status, 200);
    assert.equal(rescheduled.body.queued, false);
    const run = await server.waitForRun('again', rescheduled.body.dagRunId);
    assert.equal(run.status, 4);
    assert.match(await server.stepLog('again', rescheduled.body.dagRunId, 'a'), /hi api/);
    const renamed = await server.call('POST', '/dag-runs/again/orig/reschedule', { dagRunId: 'rs1', dagName: 'again-rs' });
    assert.deepEqual([renamed.status, renamed.body], [200, { dagRunId: 'rs1', queued: false }]);
    assert.equal((await server.waitForRun('again-rs', 'rs1')).status, 4);
    const cases: Array<[string, unknown, number, string]> = [
      ['/dag-runs/again/orig/reschedule', { dagRunId: 'rs1', dagName: 'again-rs' }, 409, 'already_exists'],
      ['/dag-runs/again/nope/reschedule', {}, 404, 'not_found'],
      ['/dag-runs/again/orig/reschedule', { dagName: 'bad name' }, 400, 'bad_request'],
    ];
    for (const [path, body, status, code] of cases) {
      const response = await server.call('POST', path, body);
      assert.deepEqual([response.status, response.body.code], [status, code], `${path}: ${response.text}`);
    }
    const gate = join(scratch, 'g6');
    await server.writeDag('busy', gated(gate, join(scratch, 't6')));
    await server.call('POST', '/dags/busy/start', { dagRunId: 'b1' });
    await server.waitForRun('busy', 'b1', (candidate) => candidate.status === 1);
    const conflict = await server.call('POST', '/dag-runs/busy/b1/reschedule', {});
    assert.deepEqual([conflict.status, conflict.body.code], [409, 'max_run_reached']);
    await writeFile(gate, '');
    await server.waitForRun('busy', 'b1');
  });
});

describe('a run id being enqueued', () => {
  let server: TestServer;
  before(async () => { server = await startTestServer('uws', { queues: [{ name: 'one', maxConcurrency: 1 }] }); });
  after(() => server.close());

  test('is taken at once: a start or a retry under it before the queued record commits is already_exists', async () => {
    await server.writeDag('taken', 'queue: one\nmaxActiveRuns: -1\nsteps:\n  - name: a\n    command: sleep 0.2\n');
    assert.equal((await server.startAndWait('taken', { dagRunId: 'prior' })).status, 4);
    assert.equal((await server.call('POST', '/dags/taken/enqueue', { dagRunId: 'busy' })).status, 200);
    const engine = server.troupe.engine;
    // The queue is full: each enqueue waits, and its record is not durable yet when the other call comes.
    const others = { dup: () => engine.startDag('taken', { dagRunId: 'dup' }), dup2: () => engine.retry('taken', 'prior', { dagRunId: 'dup2' }) };
    for (const [id, other] of Object.entries(others)) {
      const results = await Promise.allSettled([engine.enqueueDag('taken', { dagRunId: id }), other()]);
      assert.deepEqual(results.map((result) => result.status === 'fulfilled' ? 'ok' : (result.reason as { code: string }).code).sort(), ['already_exists', 'ok'], id);
    }
    for (const id of ['busy', 'dup', 'dup2']) assert.equal((await server.waitForRun('taken', id)).status, 4);
  });
});

describe('queue limits under a storm of starts and enqueues', () => {
  let server: TestServer;
  before(async () => { server = await startTestServer('uws', { queues: [{ name: 'storm', maxConcurrency: 3 }] }); });
  after(() => server.close());

  test('the running count never exceeds maxActiveRuns or a queue\'s maxConcurrency, and no run is lost', async () => {
    await server.writeDag('limited', 'maxActiveRuns: 2\nsteps:\n  - name: a\n    command: sleep 0.05\n');
    await server.writeDag('shared', 'queue: storm\nmaxActiveRuns: -1\nsteps:\n  - name: a\n    command: sleep 0.05\n');
    let sampling = true;
    let worstLimited = 0;
    let worstShared = 0;
    const sampler = (async () => {
      while (sampling) {
        const active = server.troupe.engine.activeRuns();
        worstLimited = Math.max(worstLimited, active.filter((run) => run.name === 'limited').length);
        const queue = (await server.call('GET', '/queues')).body.queues.find((candidate: any) => candidate.name === 'storm');
        worstShared = Math.max(worstShared, queue?.summary.running ?? 0);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const requests = Array.from({ length: 60 }, (_, index) => {
      if (index % 3 === 0) return server.call('POST', '/dags/limited/start', {});
      if (index % 3 === 1) return server.call('POST', '/dags/limited/enqueue', {});
      return server.call('POST', '/dags/shared/enqueue', {});
    });
    const answers = await Promise.all(requests);
    for (const answer of answers) assert.ok(answer.status === 200 || (answer.status === 409 && answer.body.code === 'max_run_reached'), answer.text);
    const accepted = answers.map((answer, index) => ({ answer, name: index % 3 === 2 ? 'shared' : 'limited' })).filter(({ answer }) => answer.status === 200);
    for (const { answer, name } of accepted) assert.equal((await server.waitForRun(name, answer.body.dagRunId)).status, 4);
    sampling = false;
    await sampler;
    assert.ok(worstLimited <= 2, `limited ran ${worstLimited} at once`);
    assert.ok(worstShared <= 3, `storm ran ${worstShared} at once`);
    assert.equal(accepted.filter(({ name }) => name === 'shared').length, 20, 'every enqueue is accepted');
  });
});

describe('queued runs across a restart', () => {
  test('runs still queued when the server stops are queued after it starts again, and run in their order', async () => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-queue-restart-'));
    const gate = join(home, 'gate');
    const trail = join(home, 'trail');
    const first = await startTestServer('uws', { home });
    await first.writeDag('later', gated(gate, trail));
    for (const id of ['k0', 'k1', 'k2', 'k3']) assert.equal((await first.call('POST', '/dags/later/enqueue', { dagRunId: id })).status, 200);
    await first.waitForRun('later', 'k0', (run) => run.status === 1);
    await first.troupe.close();
    const second = await startTestServer('uws', { home });
    try {
      assert.equal((await second.call('GET', '/dag-runs/later/k0')).body.dagRun.status, 3, 'the run stopped by the shutdown is aborted');
      for (const id of ['k2', 'k3']) assert.equal((await second.call('GET', `/dag-runs/later/${id}`)).body.dagRun.status, 5);
      await writeFile(gate, '');
      for (const id of ['k1', 'k2', 'k3']) assert.equal((await second.waitForRun('later', id)).status, 4);
      assert.deepEqual((await readFile(trail, 'utf8')).trim().split('\n'), ['k1', 'k2', 'k3']);
    } finally {
      await second.close();
    }
  });

  test('a dispatched run that does not become active in time leaves its queue failed with the reason', async () => {
    const server = await startTestServer('uws', { queuedStartDeadlineMs: 200 });
    try {
      await server.writeDag('slowstart', 'params:\n  - WAIT: "`sleep 1; echo done`"\nsteps:\n  - name: a\n    command: echo $WAIT\n');
      assert.equal((await server.call('POST', '/dags/slowstart/enqueue', { dagRunId: 's1' })).status, 200);
      const run = await server.waitForRun('slowstart', 's1');
      assert.equal(run.status, 2);
      const log = (await server.call('GET', '/dag-runs/slowstart/s1/log')).body.content;
      assert.match(log, /Queued run failed to start.*did not become active within 0\.2 seconds/);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal((await server.call('GET', '/dag-runs/slowstart/s1')).body.dagRun.status, 2, 'the abandoned start never begins');
      assert.equal(server.troupe.engine.activeRuns().length, 0);
    } finally {
      await server.close();
    }
  });
});
