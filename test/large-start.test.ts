// Starting a run of 10,000 steps on the real server: it is planned, its first record built and
// encoded a slice per turn of the event loop, so that other requests are answered meanwhile; the
// run it starts is the same, whole. Timing is the benchmark's (bench/README.md), never asserted here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { STAGE_CHANNEL, type StageMark } from '../src/core/index.ts';
import { startTestServer, waitUntil } from './helpers.ts';

const STEPS = 10_000;

/** A chain whose first step waits: the run is stopped once it has started. */
function chain(steps: number): string {
  let spec = 'steps:\n  - name: s0\n    command: sleep 30\n';
  for (let index = 1; index < steps; index++) spec += `  - name: s${index}\n    command: "true"\n`;
  return spec;
}

test('while a stored DAG of 10,000 steps is starting, other requests are answered; the run starts whole', { timeout: 300_000 }, async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  await server.writeDag('big', chain(STEPS));
  // Parsed here, so that what follows the start request's arrival is the start alone: its file is
  // read at once (readSync) and its parse kept, so before its admission the start waits for nothing.
  assert.equal((await server.call('GET', '/dags/big')).status, 200);

  // The server's own marks, in the order its event loop passed them: the start request's arrival,
  // its admission (planned, its first record built and its writes issued), each probe answered.
  const marks: string[] = [];
  const listener = (message: unknown) => {
    const { stage, detail } = message as StageMark;
    if (stage === 'request.received' && detail === 'POST') marks.push('start received');
    else if (stage === 'run.admitted') marks.push('start admitted');
    else if (stage === 'request.answered' && detail?.startsWith('GET')) marks.push('probe answered');
  };
  subscribe(STAGE_CHANNEL, listener);
  t.after(() => unsubscribe(STAGE_CHANNEL, listener));
  let starting = true;
  const start = server.call('POST', '/dags/big/start', {}).finally(() => { starting = false; });
  while (starting) assert.equal((await server.call('GET', '/dag-runs/big/none')).status, 404);
  const started = await start;
  assert.equal(started.status, 200, started.text);
  unsubscribe(STAGE_CHANNEL, listener);

  const window = marks.slice(marks.indexOf('start received'), marks.indexOf('start admitted'));
  assert.ok(marks.includes('start received') && marks.includes('start admitted'), marks.join(', '));
  // One turn of the event loop from the arrival to the admission answers none.
  const answered = window.filter((mark) => mark === 'probe answered').length;
  assert.ok(answered >= 3, `${answered} probes answered while the run was starting`);

  const { dagRunId } = started.body;
  const run = (await server.call('GET', `/dag-runs/big/${dagRunId}`)).body.dagRun;
  assert.equal(run.nodes.length, STEPS);
  assert.deepEqual(run.nodes.map((node: any) => node.step.name), Array.from({ length: STEPS }, (_, index) => `s${index}`));
  assert.ok(['running', 'not_started'].includes(run.nodes[0].statusLabel));
  assert.ok(run.nodes.slice(1).every((node: any) => node.statusLabel === 'not_started' && node.step.depends[0] === `s${Number(node.step.name.slice(1)) - 1}`));
  assert.ok(run.nodes.every((node: any, index: number) => node.stdout.endsWith(`.${String(index + 1).padStart(3, '0')}.s${index}.out`)));

  assert.equal((await server.call('POST', `/dag-runs/big/${dagRunId}/stop`)).status, 200);
  assert.ok(await waitUntil(async () => (await server.call('GET', `/dag-runs/big?dagRunId=${dagRunId}`)).body.dagRuns?.[0]?.statusLabel === 'aborted', 60_000));
});
