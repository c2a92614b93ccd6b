// npm run bench: starts the compiled server and runs the workloads, one JSON line each.
// Usage: npm run bench [-- latency chain fanout throughput memory large-dag]
import { chain } from './chain.ts';
import { fanout } from './fanout.ts';
import { availableParallelism } from 'node:os';
import { round, shSpawnReference, startBenchServer } from './harness.ts';
import { largeDag } from './large-dag.ts';
import { latency } from './latency.ts';
import { idleMemory, memory } from './memory.ts';
import { throughput } from './throughput.ts';
import { events } from './events.ts';
import { queueDrain } from './queue-drain.ts';

const all = ['latency', 'chain', 'fanout', 'throughput', 'events', 'queue-drain', 'memory', 'large-dag'];
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : all;
const server = await startBenchServer();
try {
  console.log(JSON.stringify({
    workload: 'environment', node: process.version, cpus: availableParallelism(), home: server.home,
    fileCreateMs: round(server.place.fileCreateMs, 3), spreadFolders: server.place.spreadFolders, homeAttempts: server.place.attempts, server: server.startLine.replace(/^troupe /, ''),
  }));
  const reference = await shSpawnReference();
  console.log(JSON.stringify({
    workload: 'machine', shSpawnMs: round(reference.spawnMs), shSpawnsPerSec: Math.round(reference.perSec),
    issueReference: { shSpawnMs: 1.5, shSpawnsPerSec: 900 },
  }));
  const idleMb = await idleMemory(server);
  for (const name of chosen) {
    const workload = { latency, chain, fanout, throughput, events, 'queue-drain': queueDrain, 'large-dag': largeDag } as Record<string, typeof latency>;
    if (name !== 'memory' && !workload[name]) throw new Error(`unknown workload ${name}; choose from ${all.join(', ')}`);
    const result = name === 'memory' ? await memory(server, idleMb) : await workload[name](server);
    console.log(JSON.stringify(result));
  }
} finally {
  await server.stop();
}
