// At start, before interrupted runs are settled: the step process groups that an earlier server on
// this home recorded (step-registry.ts) and that still run are ended. Steps run in process groups
// of their own, so they outlive a server killed with its whole process group, step hosts included.
import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { bootId, isSameProcess, readGroups, readOwner, type RegisteredGroup } from './step-registry.ts';

export interface OrphanOptions {
  /** How long the groups have after SIGTERM before SIGKILL. */
  graceMs?: number;
  /** Told about each group ended. */
  log?: (line: string) => void;
}

/**
 * Ends (SIGTERM, then SIGKILL after `graceMs`) every recorded group whose leader is still the
 * process recorded, then removes the registry files read. Files of a server that still runs (same
 * pid and start time) are left alone, with their groups.
 */
export async function endOrphanSteps(dir: string, options: OrphanOptions = {}): Promise<RegisteredGroup[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const boot = bootId();
  const ended: RegisteredGroup[] = [];
  const read: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch {
      continue;
    }
    const owner = readOwner(bytes);
    const sameBoot = owner !== undefined && owner.bootId === boot;
    if (sameBoot && isSameProcess(owner.pid, owner.startTime)) continue;
    read.push(path);
    // A file from before a reboot names processes that ended with it.
    if (!sameBoot) continue;
    for (const group of readGroups(bytes)) {
      if (!isSameProcess(group.pid, group.startTime)) continue;
      signalGroup(group.pid, 'SIGTERM');
      ended.push(group);
      options.log?.(`troupe: ending step process group ${group.pid} (${describe(group.label)}), left running by the server before`);
    }
  }
  if (ended.length > 0) {
    const deadline = Date.now() + (options.graceMs ?? 2000);
    while (ended.some(({ pid }) => groupExists(pid)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Verified once: a group id is not given again while any process of the group remains.
    for (const { pid } of ended) if (groupExists(pid)) signalGroup(pid, 'SIGKILL');
  }
  await Promise.all(read.map((path) => unlink(path).catch(() => {})));
  return ended;
}

function describe(label: string): string {
  const [name, dagRunId, ...step] = label.split(' ');
  return name ? `run ${name}/${dagRunId}, step ${step.join(' ')}` : 'a command of a run';
}

function groupExists(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, but is not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // gone meanwhile
  }
}
