// The step registry: the process groups of the steps a worker thread started and that still run,
// kept in a file where the next server on the same home finds them (orphans.ts), and that the
// worker's step host reads if the server disappears (step-host.ts). One file per worker thread, of
// fixed-size slots overwritten in place: a step costs one read of /proc and one pwrite as it
// starts, one pwrite as it ends. No fsync: a crash of the machine ends the steps too, while a
// process killed with SIGKILL leaves its completed writes in the page cache.
// It imports node:* modules only: the step host loads it.
import { closeSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const MAGIC = 'troupe-steps-1\n';
/** Magic (16 bytes), the owner server's pid (int32 at 16) and start time (float64 at 24), the boot id (at 32). */
const HEADER_BYTES = 128;
/** pid (int32 at 0, 0 marks a free slot), label length (uint16 at 4), start time (float64 at 8), label (at 16). */
const SLOT_BYTES = 256;
const LABEL_BYTES = SLOT_BYTES - 16;

/** A step's process group as recorded: its leader's pid and start time, and which run it belongs to. */
export interface RegisteredGroup {
  pid: number;
  /** The leader's start time in clock ticks after boot (/proc/<pid>/stat field 22); NaN when unknown. */
  startTime: number;
  /** `dagName dagRunId step`, as far as the task's environment names them. */
  label: string;
}

export interface RegistryOwner {
  pid: number;
  startTime: number;
  bootId: string;
}

const statBuffer = Buffer.alloc(1024);

/** A process's state letter and start time, read from /proc; undefined when it does not exist. */
export function processStat(pid: number): { state: string; startTime: number } | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
  } catch {
    return undefined;
  }
  try {
    const length = readSync(fd, statBuffer, 0, statBuffer.length, 0);
    // The command name (field 2) is in parentheses and may hold spaces and parentheses itself:
    // fields are counted from the last ')'. Read in place: this runs as every step starts.
    let at = statBuffer.lastIndexOf(0x29, length - 1) + 2;
    const state = String.fromCharCode(statBuffer[at]);
    for (let field = 3; field < 22; field++) at = statBuffer.indexOf(0x20, at) + 1;
    let startTime = 0;
    for (let digit = statBuffer[at]; digit >= 0x30 && digit <= 0x39; digit = statBuffer[++at]) startTime = startTime * 10 + digit - 0x30;
    return { state, startTime };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Whether `group`'s leader is the process that was recorded (a pid reused since is another). */
export function isSameProcess(pid: number, startTime: number): boolean {
  const stat = processStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.startTime === startTime;
}

export function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
  } catch {
    return '';
  }
}

/** The label of a step task: the run and step its environment names. */
export function stepLabel(env: Record<string, string>): string {
  return `${env.DAG_NAME ?? ''} ${env.DAG_RUN_ID ?? ''} ${env.DAG_RUN_STEP_NAME ?? ''}`;
}

/** One worker thread's registry file; opened with the first step. */
export class StepRegistry {
  private fd: number | undefined;
  private readonly slots = new Map<number, number>();
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  private readonly slot = Buffer.alloc(SLOT_BYTES);

  /** `dir`: where the next server looks; without one the file is temporary, unlinked once open. */
  constructor(private readonly dir: string | undefined, private readonly fileName: string, private readonly tempDir: string) {}

  /** The file's descriptor (the step host's watch list). */
  get descriptor(): number {
    if (this.fd === undefined) {
      const path = join(this.dir ?? this.tempDir, this.fileName);
      const fd = openSync(path, this.dir ? 'w+' : 'wx+', 0o600);
      if (!this.dir) unlinkSync(path);
      const header = Buffer.alloc(HEADER_BYTES);
      header.write(MAGIC, 0, 'latin1');
      header.writeInt32LE(process.pid, 16);
      header.writeDoubleLE(processStat(process.pid)?.startTime ?? NaN, 24);
      header.write(bootId(), 32, 'latin1');
      try {
        writeSync(fd, header, 0, HEADER_BYTES, 0);
      } catch (error) {
        // A full disk: the next step opens the file anew, rather than fill slots no reader trusts.
        closeSync(fd);
        throw error;
      }
      this.fd = fd;
    }
    return this.fd;
  }

  add(pid: number, label: string): void {
    const index = this.freeSlots.pop() ?? this.nextSlot++;
    this.slots.set(pid, index);
    const slot = this.slot;
    slot.writeInt32LE(pid, 0);
    const length = slot.write(label, 16, LABEL_BYTES, 'utf8');
    slot.writeUInt16LE(length, 4);
    // Read now, while the process cannot have been reaped: its exit is handled on this thread later.
    slot.writeDoubleLE(processStat(pid)?.startTime ?? NaN, 8);
    writeSync(this.descriptor, slot, 0, 16 + length, HEADER_BYTES + index * SLOT_BYTES);
  }

  /** The group ended: its slot is cleared and reused. */
  remove(pid: number): void {
    const index = this.slots.get(pid);
    if (index === undefined) return;
    this.slots.delete(pid);
    this.slot.writeInt32LE(0, 0);
    writeSync(this.descriptor, this.slot, 0, 4, HEADER_BYTES + index * SLOT_BYTES);
    this.freeSlots.push(index);
  }

  get size(): number {
    return this.slots.size;
  }
}

export function readOwner(bytes: Buffer): RegistryOwner | undefined {
  if (bytes.length < HEADER_BYTES || bytes.toString('latin1', 0, MAGIC.length) !== MAGIC) return undefined;
  return {
    pid: bytes.readInt32LE(16),
    startTime: bytes.readDoubleLE(24),
    bootId: bytes.toString('latin1', 32, HEADER_BYTES).replace(/\0+$/, ''),
  };
}

/** The groups a registry file holds (its slots in use). */
export function readGroups(bytes: Buffer): RegisteredGroup[] {
  if (readOwner(bytes) === undefined) return [];
  const groups: RegisteredGroup[] = [];
  for (let offset = HEADER_BYTES; offset + 16 <= bytes.length; offset += SLOT_BYTES) {
    const pid = bytes.readInt32LE(offset);
    if (pid <= 0) continue;
    const length = Math.min(bytes.readUInt16LE(offset + 4), LABEL_BYTES, bytes.length - offset - 16);
    groups.push({ pid, startTime: bytes.readDoubleLE(offset + 8), label: bytes.toString('utf8', offset + 16, offset + 16 + length) });
  }
  return groups;
}
