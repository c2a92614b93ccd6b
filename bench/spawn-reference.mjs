// The machine as issue 2 describes it: "one `sh -c true` costs about 1.5 ms to spawn and about 900
// can be spawned per second". Run by run.ts in a plain `node` (no loader: fork costs grow with the
// forking process's size): the median of 200 spawns one after another, then 600 spawns 16 at a
// time. Prints one JSON object.
import { spawn } from 'node:child_process';

const spawnTrue = () => new Promise((resolve, reject) => {
  const child = spawn('sh', ['-c', 'true'], { stdio: 'ignore' });
  child.once('exit', resolve);
  child.once('error', reject);
});

for (let i = 0; i < 20; i++) await spawnTrue();
const times = [];
for (let i = 0; i < 200; i++) {
  const t0 = performance.now();
  await spawnTrue();
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
let left = 600;
const t0 = performance.now();
await Promise.all(Array.from({ length: 16 }, async () => {
  while (left > 0) {
    left--;
    await spawnTrue();
  }
}));
console.log(JSON.stringify({ spawnMs: times[100], perSec: 600 / ((performance.now() - t0) / 1000) }));
