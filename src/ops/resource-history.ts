// The machine's CPU, memory, disk and load, sampled every 5 s and kept 24 h in memory (docs/metrics.md:
// `GET /services/resources/history`). Fixed-size typed arrays used as a ring: a day of samples
// costs the same memory from the first hour on, and a sample allocates nothing but the CPU reading.
import { statfsSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import type { Clock, Timers } from '../core/index.ts';

export const SAMPLE_INTERVAL_MS = 5_000;
export const RETENTION_MS = 24 * 60 * 60 * 1000;

export interface ResourceSample {
  /** Percent of all CPUs busy since the previous sample. */
  cpu: number;
  /** Percent of memory in use (not available to new processes). */
  memory: number;
  /** Percent of the data directory's file system in use. */
  disk: number;
  /** The one-minute load average. */
  load: number;
}

export interface Point {
  /** Unix seconds. */
  timestamp: number;
  value: number;
}

export type ResourceSeries = Record<keyof ResourceSample, Point[]>;

export interface ResourceHistoryOptions {
  /** Whose file system `disk` measures: troupe's data directory. */
  dir: string;
  intervalMs?: number;
  retentionMs?: number;
  /** What samples are stamped with and what `duration` counts back from. */
  clock: Clock;
  /** What the sampling waits on (the service's: Node's timers, unref'd: they keep no process alive). */
  timers: Timers;
  /** Reads the machine; tests may pass their own readings. */
  read?: () => ResourceSample;
}

const SERIES = ['cpu', 'memory', 'disk', 'load'] as const;

export class ResourceHistory {
  private readonly intervalMs: number;
  private readonly retentionMs: number;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly read: () => ResourceSample;
  private readonly times: Float64Array;
  private readonly values: Record<keyof ResourceSample, Float64Array>;
  /** Where the next sample goes; `size` samples end just before it. */
  private next = 0;
  private size = 0;
  private timer: unknown;
  private closed = false;

  constructor(options: ResourceHistoryOptions) {
    this.intervalMs = options.intervalMs ?? SAMPLE_INTERVAL_MS;
    this.retentionMs = options.retentionMs ?? RETENTION_MS;
    this.clock = options.clock;
    this.timers = options.timers;
    this.read = options.read ?? machineReader(options.dir);
    const capacity = Math.ceil(this.retentionMs / this.intervalMs) + 1;
    this.times = new Float64Array(capacity);
    this.values = { cpu: new Float64Array(capacity), memory: new Float64Array(capacity), disk: new Float64Array(capacity), load: new Float64Array(capacity) };
  }

  /** Samples every interval from now on, the first one interval from now (CPU use is a difference). */
  start(): void {
    if (this.closed || this.timer !== undefined) return;
    this.arm();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Takes a sample now. */
  sample(): void {
    let reading: ResourceSample;
    try {
      reading = this.read();
    } catch {
      // A reading that fails (the data directory's file system went away) leaves a gap, not a crash.
      return;
    }
    this.times[this.next] = this.clock.now();
    for (const series of SERIES) this.values[series][this.next] = reading[series];
    this.next = (this.next + 1) % this.times.length;
    this.size = Math.min(this.size + 1, this.times.length);
  }

  /** The samples of the last `durationMs` (within the retention), oldest first. */
  history(durationMs: number): ResourceSeries {
    const now = this.clock.now();
    const from = now - Math.min(durationMs, this.retentionMs);
    const result: ResourceSeries = { cpu: [], memory: [], disk: [], load: [] };
    const capacity = this.times.length;
    for (let i = 0; i < this.size; i++) {
      const slot = (this.next - this.size + i + capacity) % capacity;
      const at = this.times[slot];
      if (at < from || at > now) continue;
      const timestamp = Math.floor(at / 1000);
      for (const series of SERIES) result[series].push({ timestamp, value: this.values[series][slot] });
    }
    return result;
  }

  private arm(): void {
    this.timer = this.timers.setTimeout(() => {
      if (this.closed) return;
      this.sample();
      this.arm();
    }, this.intervalMs);
  }
}

/** Reads this machine; CPU use is measured against the previous reading. */
export function machineReader(dir: string): () => ResourceSample {
  let previous = cpuTimes();
  return () => {
    const current = cpuTimes();
    const total = current.total - previous.total;
    const busy = total - (current.idle - previous.idle);
    previous = current;
    const fs = statfsSync(dir);
    // As df counts: blocks reserved for root are neither used nor available.
    const used = fs.blocks - fs.bfree;
    const memory = totalmem();
    return {
      cpu: total > 0 ? (busy / total) * 100 : 0,
      memory: memory > 0 ? ((memory - freemem()) / memory) * 100 : 0,
      disk: used + fs.bavail > 0 ? (used / (used + fs.bavail)) * 100 : 0,
      load: loadavg()[0],
    };
  };
}

function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const { times } of cpus()) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total };
}
