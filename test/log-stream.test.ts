// GET .../steps/{stepName}/log/stream: a step's log as Server-Sent Events, line by line as it is
// written, each line's id the byte offset after it, then `end` once the step has ended; resumable
// from any line; on both carriers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkedFetch, describeOnCarriers, startTestServer, uncheckedFetch, type TestServer } from './helpers.ts';

export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/**
 * The messages of an event stream until the server ends it (20 s at most); `seen` is told of each
 * as it arrives. Comments (heartbeats) and the `retry:` field are left out.
 */
export async function readStream(url: string, headers: Record<string, string> = {}, seen?: (message: SseMessage) => void | Promise<void>): Promise<SseMessage[]> {
  const response = await uncheckedFetch('an event stream is read as it comes; its errors are checked apart', url, { headers, signal: AbortSignal.timeout(20_000) });
  if (response.status !== 200) assert.fail(`${response.status}: ${await response.text()}`);
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const messages: SseMessage[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body!) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let cut = buffered.indexOf('\n\n'); cut >= 0; cut = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const message: SseMessage = { event: 'message', data: '' };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':') || line.startsWith('retry:')) continue;
        const colon = line.indexOf(':');
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length === 0 && message.id === undefined) continue;
      message.data = data.join('\n');
      messages.push(message);
      await seen?.(message);
    }
  }
  return messages;
}

const lines = (messages: SseMessage[]) => messages.filter((message) => message.event === 'message').map((message) => message.data);
const endOf = (messages: SseMessage[]) => {
  const last = messages[messages.length - 1];
  assert.equal(last?.event, 'end', JSON.stringify(messages));
  return JSON.parse(last.data) as { status: number; statusLabel: string; nextOffset: number };
};

/** Three lines, then (once the test has created GO in the home) a fourth and a fifth without a line break. */
function waitingDag(go: string): string {
  return [
    'steps:',
    '  - name: talk',
    '    script: |',
    '      echo line1; echo line2; echo line3',
    `      i=0; while [ ! -f '${go}' ]; do i=$((i+1)); [ $i -gt 400 ] && exit 7; sleep 0.05; done`,
    '      echo line4; printf line5',
  ].join('\n');
}

describeOnCarriers('a step\'s log followed as it is written', (server) => {
  let runId = '';
  let ids: number[] = [];

  test('from the start: each line once, in order, while the step runs; the last one once it ended; then end', async () => {
    const go = join(server.home, 'GO-follow');
    await server.writeDag('talker', waitingDag(go));
    const started = await server.call('POST', '/dags/talker/start', {});
    runId = started.body.dagRunId;
    const messages = await readStream(`${server.base}/dag-runs/talker/${runId}/steps/talk/log/stream`, {}, async (message) => {
      // The step waits for GO after its third line: the lines before came while it ran.
      if (message.data === 'line3') await writeFile(go, '');
    });
    assert.ok(existsSync(go));
    assert.deepEqual(lines(messages), ['line1', 'line2', 'line3', 'line4', 'line5']);
    ids = messages.filter((message) => message.event === 'message').map((message) => Number(message.id));
    assert.deepEqual(ids, [6, 12, 18, 24, 29], 'each id is the byte offset after its line');
    assert.deepEqual(endOf(messages), { status: 4, statusLabel: 'succeeded', nextOffset: 29 });
    assert.equal(await server.stepLog('talker', runId, 'talk'), 'line1\nline2\nline3\nline4\nline5');
  });

  test('a reconnect from the middle (Last-Event-ID, or byteOffset) gets only the rest; a finished step ends at once', async () => {
    const url = `${server.base}/dag-runs/talker/${runId}/steps/talk/log/stream`;
    const resumed = await readStream(url, { 'last-event-id': String(ids[1]) });
    assert.deepEqual(lines(resumed), ['line3', 'line4', 'line5']);
    assert.equal(endOf(resumed).nextOffset, 29);
    const byOffset = await readStream(`${url}?byteOffset=${ids[3]}`);
    assert.deepEqual(lines(byOffset), ['line5']);
    const atEnd = await readStream(`${url}?byteOffset=29`);
    assert.deepEqual(atEnd.map((message) => message.event), ['end']);
    const latest = await readStream(`${server.base}/dag-runs/talker/latest/steps/talk/log/stream`);
    assert.deepEqual(lines(latest), ['line1', 'line2', 'line3', 'line4', 'line5']);
  });

  test('partial=true: a line not ended yet (a prompt) comes as it stands, without an id, then whole once it ends', async () => {
    const go = join(server.home, 'GO-prompt');
    await server.writeDag('prompter', [
      'steps:',
      '  - name: ask',
      '    script: |',
      '      printf "Name: "',
      `      i=0; while [ ! -f '${go}' ]; do i=$((i+1)); [ $i -gt 400 ] && exit 7; sleep 0.05; done`,
      '      echo troupe; printf done',
    ].join('\n'));
    const { dagRunId } = (await server.call('POST', '/dags/prompter/start', {})).body;
    const messages = await readStream(`${server.base}/dag-runs/prompter/${dagRunId}/steps/ask/log/stream?partial=true`, {}, async (message) => {
      // The step waits for GO after its prompt: the prompt came while it ran.
      if (message.event === 'partial' && message.data === 'Name: ') await writeFile(go, '');
    });
    assert.ok(existsSync(go));
    assert.deepEqual([messages[0].event, messages[0].data, messages[0].id], ['partial', 'Name: ', undefined]);
    assert.deepEqual(messages.filter((message) => message.event === 'message').map((message) => [message.data, message.id]), [['Name: troupe', '13'], ['done', '17']]);
    // `done` may have been read while the step was still ending: then it came as it stood first.
    for (const [index, message] of messages.entries()) {
      if (message.event !== 'partial') continue;
      assert.equal(message.id, undefined);
      assert.ok(messages[index + 1].data.startsWith(message.data), JSON.stringify(messages));
    }
    assert.equal(endOf(messages).nextOffset, 17);
    // Asked without partial=true, the same log has no partial message.
    const plain = await readStream(`${server.base}/dag-runs/prompter/${dagRunId}/steps/ask/log/stream`);
    assert.deepEqual(plain.map((message) => message.event), ['message', 'message', 'end']);
  });

  test('stderr with stream=stderr; a step that wrote nothing ends with nextOffset 0; a secret shows masked', async () => {
    process.env.LOG_STREAM_TEST_SECRET = 'ls-S3CRET-91b2';
    await server.writeDag('secretive', [
      'secrets:',
      '  - name: API_TOKEN',
      '    provider: env',
      '    key: LOG_STREAM_TEST_SECRET',
      'steps:',
      '  - name: leak',
      '    command: sh -c \'echo "token=${API_TOKEN}"; echo "err ${API_TOKEN}" >&2\'',
      '  - name: quiet',
      '    command: "true"',
    ].join('\n'));
    const run = await server.startAndWait('secretive');
    assert.equal(run.status, 4, JSON.stringify(run));
    const base = `${server.base}/dag-runs/secretive/${run.dagRunId}/steps`;
    assert.deepEqual(lines(await readStream(`${base}/leak/log/stream`)), ['token=*******']);
    const errors = await readStream(`${base}/leak/log/stream?stream=stderr`);
    assert.deepEqual(lines(errors), ['err *******']);
    assert.equal(endOf(errors).status, 4);
    const quiet = await readStream(`${base}/quiet/log/stream`);
    assert.deepEqual(quiet.map((message) => message.event), ['end']);
    assert.equal(endOf(quiet).nextOffset, 0);
  });

  test('an unknown step or run is 404, a bad offset 400, before anything streams', async () => {
    const base = `${server.base}/dag-runs/talker/${runId}`;
    const unknownStep = await checkedFetch(`${base}/steps/nope/log/stream`);
    assert.equal(unknownStep.status, 404);
    assert.equal(((await unknownStep.json()) as { code: string }).code, 'not_found');
    assert.equal((await checkedFetch(`${server.base}/dag-runs/talker/no-such-run/steps/talk/log/stream`)).status, 404);
    assert.equal((await checkedFetch(`${base}/sub-dag-runs/no-such-child/steps/talk/log/stream`)).status, 404);
    assert.equal((await checkedFetch(`${base}/steps/talk/log/stream?byteOffset=-1`)).status, 400);
    assert.equal((await checkedFetch(`${base}/steps/talk/log/stream`, { headers: { 'last-event-id': 'x1' } })).status, 400);
    assert.equal((await checkedFetch(`${base}/steps/talk/log/stream?stream=both`)).status, 400);
  });
});

test('a sub DAG run\'s step log streams under sub-dag-runs', async (t) => {
  const server = await startTestServer('uws');
  t.after(() => server.close());
  await server.writeDag('parent', 'steps:\n  - name: call\n    call: child\n---\nname: child\nsteps:\n  - name: inner\n    command: echo from the child\n');
  const run = await server.startAndWait('parent');
  const children = await server.call('GET', `/dag-runs/parent/${run.dagRunId}/sub-dag-runs`);
  const childId = children.body.subRuns[0].dagRunId;
  const messages = await readStream(`${server.base}/dag-runs/parent/${run.dagRunId}/sub-dag-runs/${childId}/steps/inner/log/stream`);
  assert.deepEqual(lines(messages), ['from the child']);
  assert.equal(endOf(messages).status, 4);
});

test('with authentication on: no credential is 401; ?token= is taken, as a browser\'s EventSource must send it', async (t) => {
  const server: TestServer = await startTestServer('node', { auth: { token: 'log-stream-token-1' } });
  t.after(() => server.close());
  await server.writeDag('guarded', 'steps:\n  - name: say\n    command: echo guarded line\n');
  const started = await checkedFetch(`${server.base}/dags/guarded/start`, { method: 'POST', headers: { authorization: 'Bearer log-stream-token-1', 'content-type': 'application/json' }, body: '{}' });
  const { dagRunId } = (await started.json()) as { dagRunId: string };
  const url = `${server.base}/dag-runs/guarded/${dagRunId}/steps/say/log/stream`;
  assert.equal((await checkedFetch(url)).status, 401);
  assert.equal((await checkedFetch(`${url}?token=wrong-token`)).status, 401);
  const messages = await readStream(`${url}?token=log-stream-token-1`);
  assert.deepEqual(lines(messages), ['guarded line']);
  assert.equal(endOf(messages).status, 4);
});
