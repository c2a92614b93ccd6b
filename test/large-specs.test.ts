// A definition near the 1 MiB body limit is checked in time proportional to its size: no check
// recurses once per step (a long dependency chain overflowed the call stack: 500) and none compares
// every key or problem with every other (a map of 70,000 keys held the server for minutes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nearOneMb } from './near-one-mb.ts';
import { startTestServer } from './helpers.ts';


// Each step depends on the next: checking the graph walks one path as long as the DAG.
const backwardChain = (closed: boolean) => nearOneMb('type: graph\nsteps:\n',
  (i) => `  - name: s${i}\n    command: "true"\n    depends: s${i + 1}\n`,
  (count) => `  - name: s${count}\n    command: "true"\n${closed ? '    depends: s0\n' : ''}`);

test('a 1 MiB definition whose dependencies form one long path validates, and its cycle is named by its ends', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  const open = await server.call('POST', '/dags/validate', { spec: backwardChain(false) });
  assert.equal(open.status, 200, open.text.slice(0, 300));
  assert.deepEqual(open.body.errors, []);
  assert.equal(open.body.valid, true);
  const closed = await server.call('POST', '/dags/validate', { spec: backwardChain(true) });
  assert.equal(closed.status, 200, closed.text.slice(0, 300));
  assert.equal(closed.body.valid, false);
  assert.equal(closed.body.errors.length, 1);
  assert.match(closed.body.errors[0], /^steps\[0\]\.depends \(line 5\): dependency cycle: s0 -> s1 -> s2 -> s3 -> s4 -> \.\.\. \(\d+ more\) -> (s\d+ -> ){4}s0$/);
  assert.equal((await server.call('POST', '/dags', { name: 'longpath', spec: backwardChain(false) })).status, 201);
  assert.equal((await server.call('GET', '/dags/longpath')).body.dag.steps.length > 10_000, true);
});

test('a 1 MiB map of 70,000 keys is checked for repeated keys in one pass, with the repeated key\'s line', { timeout: 120_000 }, async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  let keys = 0;
  const spec = nearOneMb('env:\n', (i) => { keys = i + 1; return `  K${i}: v\n`; }, () => '  K7: again\nsteps:\n  - echo hi\n');
  assert.ok(keys > 70_000);
  const validated = await server.call('POST', '/dags/validate', { spec });
  assert.equal(validated.status, 200);
  assert.deepEqual(validated.body.errors, [`line ${keys + 2}: Map keys must be unique: "K7" is repeated`]);
  // Thousands of problems in one map are each placed on their line.
  const badNames = nearOneMb('env:\n', (i) => `  ${i}x: v\n`, () => 'steps:\n  - echo hi\n');
  const invalid = await server.call('POST', '/dags/validate', { spec: badNames });
  assert.equal(invalid.status, 200);
  assert.ok(invalid.body.errors.length > 70_000);
  assert.equal(invalid.body.errors[0], 'env.0x (line 2): invalid variable name "0x"');
  assert.equal((await server.call('GET', '/health')).status, 200);
});
