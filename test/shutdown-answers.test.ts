// Requests under way when the server stops get their answer, never a reset: with the default
// shutdown grace of 0, SIGTERM while validates wait on the parse thread, on both carriers; a run
// start among them gets the documented 500.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, startCli } from './cli-process.ts';
import { sendAlone } from './raw-http.ts';

type Outcome = { status: number; body: any } | { reset: string };

/** One request on a connection of its own; `answer` settles with its answer or how the connection ended without one. */
function send(port: number, method: string, path: string, payload?: unknown): { written: Promise<void>; answer: Promise<Outcome> } {
  const sent = sendAlone(port, method, path, payload);
  return { written: sent.written, answer: sent.answer.catch((error: Error) => ({ reset: error.message })) };
}

/** About 150 KB of steps: a tenth of a second or more on the parse thread each, one after another. */
const SPEC = `steps:\n${Array.from({ length: 4_500 }, (_, i) => `  - name: s${i}\n    command: echo ${i}\n`).join('')}`;

/** Over 16 KiB: parsed on the parse thread, after what waits there. */
const INLINE = `steps:\n${Array.from({ length: 700 }, (_, i) => `  - name: s${i}\n    command: echo ${i}\n`).join('')}`;

for (const carrier of ['node', 'uws'] as const) {
  test(`SIGTERM with requests under way (${carrier}): each gets its answer, none a reset; the process exits 0`, { timeout: 120_000 }, async (t) => {
    const home = await mkdtemp(join(tmpdir(), 'troupe-stop-'));
    t.after(() => rm(home, { recursive: true, force: true }));
    const { child, base } = await startCli(['--home', home, '--port', '0', '--http', carrier]);
    t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
    const port = Number(new URL(base).port);

    // The parse thread takes them one at a time: once the first is answered, the others have long
    // been read and wait for it.
    const validates = Array.from({ length: 4 }, () => send(port, 'POST', '/dags/validate', { spec: SPEC, name: 'big' }));
    const reads = Array.from({ length: 20 }, () => send(port, 'GET', '/dag-runs'));
    const first = await Promise.race(validates.map((request) => request.answer));
    assert.equal('status' in first && first.status, 200, JSON.stringify(first).slice(0, 300));
    // An inline run whose definition is parsed after the validates still waiting: by then the
    // server is stopping, and the start is refused with the documented 500.
    const late = send(port, 'POST', '/dag-runs', { name: 'late', spec: INLINE });
    await late.written;
    child.kill('SIGTERM');

    const refused = await late.answer;
    assert.ok('status' in refused, JSON.stringify(refused));
    assert.equal(refused.status, 500);
    assert.deepEqual(refused.body, { code: 'internal_error', message: 'the server is shutting down' });
    const outcomes = await Promise.all([...validates, ...reads].map((request) => request.answer));
    const resets = outcomes.filter((outcome) => 'reset' in outcome);
    assert.deepEqual(resets, [], `${resets.length} of ${outcomes.length} requests got no answer`);
    for (const outcome of outcomes as Array<{ status: number; body: any }>) {
      // A request the stopping server refuses gets the documented 500 error document.
      if (outcome.status === 500) assert.match(outcome.body.message, /shutting down/);
      else assert.equal(outcome.status, 200, JSON.stringify(outcome.body).slice(0, 300));
    }
    for (const outcome of outcomes.slice(0, validates.length) as Array<{ status: number; body: any }>) {
      if (outcome.status === 200) assert.equal(outcome.body.valid, true);
    }
    assert.equal(await exited(child), 0);
  });
}
