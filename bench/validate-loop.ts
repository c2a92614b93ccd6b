// How long a 1 MiB definition holds the server's event loop: POST /dags/validate, POST /dags and
// an inline start of 1 MiB specs on a real server in this process, with the event loop's longest
// stall (the largest gap between the ticks of a 5 ms interval, the request's end included) and the
// GET /health answers that came back while each request was in flight. One JSON line; `node --import tsx bench/validate-loop.ts`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { homePaths, startTroupe } from '../src/main.ts';
import { nearOneMb } from '../test/near-one-mb.ts';


const shapes: Record<string, string> = {
  chain: nearOneMb('steps:\n', (i) => `  - name: s${i}\n    command: echo ${i}\n`),
  envMap: nearOneMb('env:\n', (i) => `  K${i}: v\n`, () => 'steps:\n  - echo\n'),
  unknownCalls: nearOneMb('steps:\n', (i) => `  - call: nosuch${i}\n`),
};

const home = await mkdtemp(join(tmpdir(), 'troupe-bench-'));
const troupe = await startTroupe({ host: '127.0.0.1', port: 0, home, ...homePaths(home), carrier: 'node' });
const base = `http://127.0.0.1:${troupe.server.port}/api/v2`;
const post = (path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, text: await r.text() }));

async function measure(request: () => Promise<{ status: number; text: string }>) {
  let lastTick = performance.now();
  let stallMs = 0;
  const ticks = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - lastTick);
    lastTick = now;
  }, 5);
  let done = false;
  let healthAnswers = 0;
  const pings = (async () => {
    while (!done) {
      await fetch(`${base}/health`).then((r) => r.text());
      if (!done) healthAnswers++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const start = performance.now();
  const answer = await request();
  const ms = Math.round(performance.now() - start);
  stallMs = Math.max(stallMs, performance.now() - lastTick);
  done = true;
  clearInterval(ticks);
  await pings;
  return { status: answer.status, ms, loopMaxMs: Math.round(stallMs), healthAnswers };
}

const results: Record<string, unknown> = {};
for (const [name, spec] of Object.entries(shapes)) {
  await post('/dags/validate', { spec }); // a first round to warm up (and start the parse thread)
  results[`validate.${name}`] = await measure(() => post('/dags/validate', { spec }));
}
results['create.chain'] = await measure(() => post('/dags', { name: 'bench-big', spec: shapes.chain }));
results['inline.chain'] = await measure(() => post('/dag-runs', { spec: shapes.chain, name: 'bench-inline' }));
await troupe.close();
await rm(home, { recursive: true, force: true });
console.log(JSON.stringify({ workload: 'validate-loop', ...results }));
