// `troupe worker`: takes DAG runs from troupe servers through Redis and runs them until SIGTERM or
// SIGINT, then drains. The work is worker-main.ts's, loaded once the command line is known good.
import { maskedRedisUrl, parseLabels, workerIdProblem } from '../../core/index.ts';
import { resolveConfig } from '../../config/index.ts';
import type { WorkerOptions } from '../../worker-main.ts';
import { EXIT_FAILED, EXIT_OK, UsageError } from '../errors.ts';
import { StopSignals } from '../stop-signals.ts';

/** The verb's flags as the parser hands them: troupe's names, and Dagu's (`--worker.labels`...). */
export interface WorkerFlags {
  redis?: string;
  labels?: string;
  'worker.labels'?: string;
  maxActiveRuns?: string;
  'worker.maxActiveRuns'?: string;
  id?: string;
  'worker.id'?: string;
  home?: string;
  config?: string;
  shutdownGrace?: string;
  keepRuns?: string;
}

/** Dagu's default: a worker takes up to 100 runs at once (its pollers). */
export const DEFAULT_MAX_ACTIVE_RUNS = 100;

/** The finished runs whose files and records a worker keeps (the newest): the server holds them all. */
export const DEFAULT_KEEP_RUNS = 1_000;

export const NO_REDIS = 'worker needs the servers\' Redis: pass --redis URL, set TROUPE_REDIS_URL, or set distributed.redis in config.yaml';

/** The labels, the limit and the id the flags give; a value that cannot be used is a usage error naming the flag as typed. */
export function workerFlagsOf(flags: WorkerFlags): Pick<WorkerOptions, 'labels' | 'maxActiveRuns' | 'id' | 'keepRuns'> {
  const invalid = (flag: string, value: string, reason: string) => new UsageError(`${flag} "${value}" is not valid: ${reason}`, 'worker');
  const labels = given(flags, 'labels', 'worker.labels');
  const limit = given(flags, 'maxActiveRuns', 'worker.maxActiveRuns');
  const id = given(flags, 'id', 'worker.id');
  let parsedLabels: Record<string, string> = {};
  if (labels) {
    try {
      parsedLabels = parseLabels(labels.value);
    } catch (error) {
      throw invalid(labels.flag, labels.value, (error as Error).message);
    }
  }
  let maxActiveRuns = DEFAULT_MAX_ACTIVE_RUNS;
  if (limit) {
    maxActiveRuns = /^\s*\d+\s*$/.test(limit.value) ? Number(limit.value) : Number.NaN;
    if (!Number.isSafeInteger(maxActiveRuns) || maxActiveRuns < 1) throw invalid(limit.flag, limit.value, 'give a whole number of runs, 1 or more');
  }
  let keepRuns = DEFAULT_KEEP_RUNS;
  if (flags.keepRuns !== undefined) {
    keepRuns = /^\s*\d+\s*$/.test(flags.keepRuns) ? Number(flags.keepRuns) : Number.NaN;
    if (!Number.isSafeInteger(keepRuns)) throw invalid('--keep-runs', flags.keepRuns, 'give a whole number of runs, 0 or more');
  }
  const problem = id === undefined ? undefined : workerIdProblem(id.value);
  if (problem) throw new UsageError(`${id!.flag}: ${problem}`, 'worker');
  return { labels: parsedLabels, maxActiveRuns, id: id?.value, keepRuns };
}

export async function worker(flags: WorkerFlags): Promise<number> {
  // Handlers first: a signal that arrives while the worker starts must still drain it.
  const stopSignals = new StopSignals(['SIGINT', 'SIGTERM'], undefined, (again) => say(`${again} received: already draining`));
  try {
    const chosen = workerFlagsOf(flags);
    // config.yaml as every verb finds it (--config, TROUPE_CONFIG, HOME/config.yaml), for its
    // distributed.redis and shutdownGraceSec; flags and TROUPE_* variables win over it.
    const config = await resolveConfig({ home: flags.home, config: flags.config, redis: flags.redis, shutdownGrace: flags.shutdownGrace }, process.env);
    for (const warning of config.warnings) say(warning);
    if (config.redisUrl === undefined) throw new UsageError(NO_REDIS, 'worker');
    const { startWorker } = await import('../../worker-main.ts');
    // The scratch home is --home alone: TROUPE_HOME names a server's home, which a worker beside it must not take.
    const running = await startWorker({ ...chosen, redisUrl: config.redisUrl, home: flags.home === undefined ? undefined : config.home });
    const labels = Object.entries(chosen.labels).map(([key, value]) => `${key}=${value}`).join(',') || 'any';
    process.stderr.write(`troupe worker ${running.id} takes runs for labels ${labels} (at most ${chosen.maxActiveRuns} at once) from ${maskedRedisUrl(config.redisUrl)}\n`);
    const alive = setInterval(() => {}, 2 ** 30);
    const signal = await stopSignals.received;
    clearInterval(alive);
    const grace = config.shutdownGraceMs;
    say(grace > 0 ? `${signal} received: taking no new run; runs under way have ${grace / 1000} s to finish` : `${signal} received: stopping the runs under way`);
    try {
      await running.drain(grace);
    } catch (error) {
      say(`drain failed: ${(error as Error).message}`);
      return EXIT_FAILED;
    }
    say('stopped');
    // Drained, the worker is done: a handle still open (a connection not yet closed) must not keep
    // the process past its stop, which a process manager would end with SIGKILL.
    setTimeout(() => process.exit(), 1000).unref();
    return EXIT_OK;
  } finally {
    stopSignals.close();
  }
}

/** The flag given, by either of its names; both is a usage error unless they agree. */
function given(flags: WorkerFlags, name: 'labels' | 'maxActiveRuns' | 'id', dagu: 'worker.labels' | 'worker.maxActiveRuns' | 'worker.id'): { flag: string; value: string } | undefined {
  const spelled = (key: string) => `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
  const ours = flags[name];
  const theirs = flags[dagu];
  if (ours !== undefined && theirs !== undefined && ours !== theirs) throw new UsageError(`give ${spelled(name)} or ${spelled(dagu)} (Dagu's name for it), not both`, 'worker');
  if (ours !== undefined) return { flag: spelled(name), value: ours };
  return theirs === undefined ? undefined : { flag: spelled(dagu), value: theirs };
}

function say(line: string): void {
  process.stderr.write(`troupe: ${line}\n`);
}
