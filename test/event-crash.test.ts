// The event log across a crash: the events committed before `kill -9` are all delivered once
// after the restart, and none is told that the store does not show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkedFetch } from './helpers.ts';
import { exited, startCli, type CliServer } from './cli-process.ts';
import { makeHome } from './cli-run.ts';
import { SseClient } from './support/sse-client.ts';

const FINAL: Record<string, number> = { 'run.succeeded': 4, 'run.failed': 2, 'run.aborted': 3, 'run.partially_succeeded': 6 };

test('after kill -9, a client resumes from its last event: every committed event once, in order, none invented', async (t) => {
  const home = await makeHome();
  const servers: CliServer[] = [];
  const clients: SseClient[] = [];
  t.after(async () => {
    for (const client of clients) client.close();
    for (const { child } of servers) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    await home.remove();
  });
  await home.writeDag('churn', 'maxActiveRuns: -1\nsteps:\n  - name: a\n    command: echo a\n  - name: b\n    command: sleep 0.3\n    depends: [a]\n');
  const first = await startCli(['--home', home.dir, '--port', '0'], {}, { detached: true });
  servers.push(first);
  const before = await SseClient.open(`${first.base}/events`);
  clients.push(before);
  // Runs keep starting until the kill: some end, some are cut in the middle.
  let starting = true;
  const starter = (async () => {
    while (starting) {
      await checkedFetch(`${first.base}/dags/churn/start`, { method: 'POST', body: '{}' }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  })();
  await before.until((messages) => messages.filter((message) => message.event === 'run.succeeded').length >= 3, 30_000);
  process.kill(-first.child.pid!, 'SIGKILL');
  starting = false;
  await starter;
  await exited(first.child);
  const seen = before.messages.filter((message) => message.id !== undefined);
  const last = seen.at(-1)!.id!;

  const second = await startCli(['--home', home.dir, '--port', '0'], {}, { detached: true });
  servers.push(second);
  const resumed = await SseClient.open(`${second.base}/events`, { 'last-event-id': last });
  const everything = await SseClient.open(`${second.base}/events?since=0`);
  clients.push(resumed, everything);
  // The runs the crash cut are settled as the server starts: their ends are the newest events.
  const runs = ((await (await checkedFetch(`${second.base}/dag-runs?name=churn`)).json()) as { dagRuns: Array<{ dagRunId: string; status: number }> }).dagRuns;
  assert.ok(runs.every((run) => run.status !== 1), 'recovery settled every run');
  const ends = (messages: { event: string; data: string }[]) => new Set(messages.filter((message) => message.event in FINAL).map((message) => JSON.parse(message.data).dagRunId));
  await everything.until((messages) => runs.every((run) => ends(messages).has(run.dagRunId)), 30_000);
  const log = everything.messages.filter((message) => message.id !== undefined);
  await resumed.until((messages) => messages.filter((message) => message.id !== undefined).length >= log.filter((message) => Number(message.id) > Number(last)).length, 30_000);

  // Once each: what the first client saw, then the resumed stream, is the whole log in order.
  const ids = [...seen, ...resumed.messages.filter((message) => message.id !== undefined)].map((message) => message.id);
  assert.deepEqual(ids, log.map((message) => message.id));
  assert.equal(new Set(ids).size, ids.length, 'no event twice');
  // What the first server told before it died is what the log holds: nothing told was lost.
  for (const message of seen) assert.equal(log.find((kept) => kept.id === message.id)?.data, message.data);
  // None invented: every run told of exists, and its last status told is its stored one.
  const stored = new Map(runs.map((run) => [run.dagRunId, run.status]));
  const lastTold = new Map<string, number>();
  for (const message of log) {
    const event = JSON.parse(message.data);
    if (!event.type.startsWith('run.')) continue;
    assert.ok(stored.has(event.dagRunId), `an event of a run the store does not hold: ${message.data}`);
    lastTold.set(event.dagRunId, event.status);
  }
  for (const [dagRunId, status] of stored) assert.equal(lastTold.get(dagRunId), status, `run ${dagRunId}`);
});
