// Reading a step's or a run's log by byte offsets, as a follower does: each answer's nextOffset is
// where the next read starts, no line comes twice or is missed, a line still being written waits
// for its newline, the final line without one comes once the step has ended, secrets stay masked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { startTestServer, waitUntil } from './helpers.ts';

const SECRET = 'offsets-S3CRET-71c2';
const SECRET_ENV = 'LOG_OFFSETS_TEST_TOKEN';

// No secret: a step with secrets has its output masked a line at a time, so a line never reaches
// its file in parts.
const TALKS = [
  'steps:',
  '  - name: talk',
  '    script: |',
  '      for i in 1 2 3; do echo "line $i"; done',
  '      echo "token here"',
  // A line written in two parts, with a pause between: a follower must get it once, whole.
  '      printf "par"; sleep 0.4; printf "tial\\n"',
  '      for i in 4 5 6; do echo "line $i"; sleep 0.1; done',
  // The last line has no newline.
  '      printf "last"',
].join('\n');

const EXPECTED = ['line 1', 'line 2', 'line 3', 'token here', 'partial', 'line 4', 'line 5', 'line 6', 'last'];

test('a follower reads a running step\'s stdout by byteOffset: every line once and whole; the last one once the step ended', async (t) => {
  const server = await startTestServer('uws');
  t.after(() => server.close());
  await server.writeDag('talks', TALKS);
  const { dagRunId } = (await server.call('POST', '/dags/talks/start', {})).body;
  const path = `/dag-runs/talks/${dagRunId}/steps/talk/log`;
  assert.ok(await waitUntil(async () => (await server.call('GET', path)).body.totalLines >= 4));

  const first = (await server.call('GET', `${path}?byteOffset=0&limit=2`)).body;
  assert.deepEqual([first.content, first.lineCount, first.hasMore, first.nextOffset], ['line 1\nline 2', 2, true, 14]);
  const lines: string[] = first.content.split('\n');
  let next: number = first.nextOffset;
  let ended = false;
  // Until an answer read after the run ended: then the file is complete.
  while (!ended && lines.length <= EXPECTED.length) {
    ended = (await server.call('GET', `/dag-runs/talks/${dagRunId}`)).body.dagRun.status !== 1;
    const answer = await server.call('GET', `${path}?byteOffset=${next}&limit=2`);
    assert.equal(answer.status, 200, answer.text);
    assert.ok(answer.body.lineCount <= 2);
    assert.ok(answer.body.nextOffset >= next);
    if (answer.body.lineCount > 0) lines.push(...answer.body.content.split('\n'));
    if (!answer.body.hasMore) await new Promise((resolve) => setTimeout(resolve, 30));
    next = answer.body.nextOffset;
  }
  // The reads after the end give the rest (limit 2 a read), then nothing; a wrong offset would
  // repeat lines, so the reads are bounded by the lines there are.
  for (let reads = 0; reads < EXPECTED.length; reads++) {
    const answer = (await server.call('GET', `${path}?byteOffset=${next}&limit=2`)).body;
    if (answer.lineCount === 0) break;
    lines.push(...answer.content.split('\n'));
    next = answer.nextOffset;
  }
  assert.deepEqual(lines, EXPECTED);
  const run = (await server.call('GET', `/dag-runs/talks/${dagRunId}`)).body.dagRun;
  assert.equal(next, (await stat(run.nodes[0].stdout)).size, 'the last nextOffset is the end of the file');
  const end = (await server.call('GET', `${path}?byteOffset=${next}`)).body;
  assert.deepEqual([end.content, end.lineCount, end.hasMore, end.nextOffset], ['', 0, false, next]);
  // Past the end: nothing, and nextOffset is the file's size.
  assert.equal((await server.call('GET', `${path}?byteOffset=${next + 100}`)).body.nextOffset, next);
  // An offset inside a line: the lines that start after it.
  assert.equal((await server.call('GET', `${path}?byteOffset=3&limit=1`)).body.content, 'line 2');
  // Every answer of the route says where it ended, byteOffset or not.
  assert.equal((await server.call('GET', `${path}?offset=1&limit=2`)).body.nextOffset, 14);
  assert.equal((await server.call('GET', `${path}?tail=1`)).body.nextOffset, next);
  const whole = (await server.call('GET', `${path}?byteOffset=0`)).body;
  assert.deepEqual([whole.content, whole.totalLines, whole.isEstimate], [EXPECTED.join('\n'), EXPECTED.length, false]);
});

test('a secret a step prints is masked in a byteOffset read, and nextOffset counts the bytes of the file as stored', async (t) => {
  process.env[SECRET_ENV] = SECRET;
  const server = await startTestServer('uws');
  t.after(async () => {
    delete process.env[SECRET_ENV];
    await server.close();
  });
  await server.writeDag('tells', [
    'secrets:', '  - name: TOKEN', '    provider: env', `    key: ${SECRET_ENV}`,
    'steps:', '  - name: tell', '    command: echo "one"; echo "token ${TOKEN} here"; echo "three"',
  ].join('\n'));
  const run = await server.startAndWait('tells');
  const path = `/dag-runs/tells/${run.dagRunId}/steps/tell/log`;
  const first = (await server.call('GET', `${path}?byteOffset=0&limit=1`)).body;
  const rest = await server.call('GET', `${path}?byteOffset=${first.nextOffset}`);
  assert.deepEqual([first.content, rest.body.content], ['one', 'token ******* here\nthree']);
  assert.ok(!rest.text.includes(SECRET));
  assert.equal(rest.body.nextOffset, (await stat(run.nodes[0].stdout)).size);
  const runLog = await server.call('GET', `/dag-runs/tells/${run.dagRunId}/log?byteOffset=0`);
  assert.ok(!runLog.text.includes(SECRET));
});

test('the run log by byteOffset: read a line at a time, it is the whole log; a bad byteOffset is 400', async (t) => {
  const server = await startTestServer('uws');
  t.after(() => server.close());
  await server.writeDag('runlog', 'steps:\n  - name: a\n    command: echo a\n  - name: b\n    command: echo b\n    depends: a\n');
  const run = await server.startAndWait('runlog');
  const path = `/dag-runs/runlog/${run.dagRunId}/log`;
  const whole = (await server.call('GET', path)).body;
  assert.ok(whole.lineCount >= 2, whole.content);
  const lines: string[] = [];
  let next = 0;
  for (let reads = 0; reads <= whole.lineCount; reads++) {
    const answer = (await server.call('GET', `${path}?byteOffset=${next}&limit=1`)).body;
    if (answer.lineCount === 0) break;
    assert.equal(answer.lineCount, 1);
    lines.push(answer.content);
    next = answer.nextOffset;
  }
  assert.deepEqual(lines, whole.content.split('\n'));
  assert.equal(next, whole.nextOffset);
  for (const bad of ['-1', '1.5', 'x', '1e3']) {
    for (const route of [path, `/dag-runs/runlog/${run.dagRunId}/steps/a/log`]) {
      const refused = await server.call('GET', `${route}?byteOffset=${bad}`);
      assert.deepEqual([refused.status, refused.body.code], [400, 'bad_request'], `${route} byteOffset=${bad}`);
    }
  }
  // A step that has written nothing yet has no file: an empty answer at 0.
  await server.writeDag('later', 'steps:\n  - name: wait\n    command: sleep 0.3\n  - name: after\n    command: echo after\n    depends: wait\n');
  const { dagRunId } = (await server.call('POST', '/dags/later/start', {})).body;
  const none = (await server.call('GET', `/dag-runs/later/${dagRunId}/steps/after/log?byteOffset=0`)).body;
  assert.deepEqual([none.content, none.nextOffset], ['', 0]);
  await server.waitForRun('later', dagRunId);
});
