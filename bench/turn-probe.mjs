// Loaded into the server by bench/large-start.ts (node --import): on the main thread, every
// millisecond, the CPU time the thread was given since the last tick (its scheduler statistics:
// time on a core, not time waiting for one) and the wall time between the ticks. SIGUSR2 writes
// the largest of each since the last signal to $TROUPE_TURN_PROBE_OUT and starts over: the
// longest turn of the event loop in CPU time, which the machine's other load does not stretch.
import { readFileSync, writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

if (isMainThread && process.env.TROUPE_TURN_PROBE_OUT) {
  const stat = `/proc/self/task/${process.pid}/schedstat`;
  const cpuMs = () => Number(readFileSync(stat, 'utf8').split(' ')[0]) / 1e6;
  let lastCpu = cpuMs();
  let lastWall = performance.now();
  let longest = { cpuMs: 0, wallMs: 0 };
  setInterval(() => {
    const cpu = cpuMs();
    const wall = performance.now();
    longest = { cpuMs: Math.max(longest.cpuMs, cpu - lastCpu), wallMs: Math.max(longest.wallMs, wall - lastWall) };
    [lastCpu, lastWall] = [cpu, wall];
  }, 1).unref();
  process.on('SIGUSR2', () => {
    writeFileSync(process.env.TROUPE_TURN_PROBE_OUT, JSON.stringify(longest));
    longest = { cpuMs: 0, wallMs: 0 };
  });
}
