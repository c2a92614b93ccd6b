// memory: server RSS idle after start, and after the other workloads.
import { round, sleep, type BenchServer } from './harness.ts';

export async function idleMemory(server: BenchServer): Promise<number> {
  await sleep(1000);
  return round(await server.rssMb(), 1);
}

export async function memory(server: BenchServer, idleMb: number): Promise<Record<string, unknown>> {
  await sleep(1000);
  return {
    workload: 'memory', idleRssMb: idleMb, afterLoadRssMb: round(await server.rssMb(), 1),
    stepHostsRssMb: round(await server.childrenRssMb(), 1), targetIdleMb: 80,
  };
}
