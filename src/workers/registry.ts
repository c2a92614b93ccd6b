// The workers known to Redis: each `troupe worker` writes its labels, its limit and its runs there
// every heartbeat, and the server lists them in Dagu's shape. Heartbeat times are Redis's own clock
// (TIME), never a machine's: a worker whose clock is off is not shown dead, or alive, for it.
import type { Redis } from 'ioredis';
import { healthOf, type RunningTask, type WorkerView } from '../core/index.ts';

const WORKERS = 'troupe:workers';
const workerKey = (id: string) => `troupe:worker:${id}`;

/** A worker's entry is kept this long after its last heartbeat (shown unhealthy meanwhile), then dropped. */
export const WORKER_KEPT_MS = 3600_000;
// KEYS[1] the set of workers, KEYS[2] the worker's entry; ARGV: id, entry, how long it is kept.
const HEARTBEAT = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[1], ms, ARGV[1])
return ms`;

// KEYS[1] the set of workers; ARGV[1] how long an entry is kept. Drops the entries gone stale, then
// answers Redis's time and every worker with its heartbeat's time.
const LIST = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms - tonumber(ARGV[1]))
return { ms, redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES') }`;

type Scripted = Redis & {
  troupeHeartbeat(set: string, key: string, id: string, entry: string, keptMs: number): Promise<number>;
  troupeWorkers(set: string, keptMs: number): Promise<[number, string[]]>;
};

function scripted(redis: Redis): Scripted {
  const commands = redis as Scripted;
  if (typeof commands.troupeHeartbeat !== 'function') {
    redis.defineCommand('troupeHeartbeat', { numberOfKeys: 2, lua: HEARTBEAT });
    redis.defineCommand('troupeWorkers', { numberOfKeys: 1, lua: LIST });
  }
  return commands;
}

/** Writes the worker's state and its heartbeat; resolves with the heartbeat's time (Redis's clock, ms). */
export function heartbeat(redis: Redis, state: WorkerState): Promise<number> {
  return scripted(redis).troupeHeartbeat(WORKERS, workerKey(state.id), state.id, JSON.stringify(state), WORKER_KEPT_MS);
}

/** Takes the worker out of the list (it stops: a drain that ended, or its last runs handed back). */
export async function leave(redis: Redis, id: string): Promise<void> {
  await redis.multi().zrem(WORKERS, id).del(workerKey(id)).exec();
}

/** What a worker says of itself each heartbeat. */
export interface WorkerState {
  id: string;
  labels: Record<string, string>;
  maxActiveRuns: number;
  runningTasks: RunningTask[];
  /** It drains (SIGTERM): it takes no new run. */
  draining?: boolean;
  /** Its process, new at each start: runs handed to an earlier process of the same id are lost with it. */
  incarnation?: string;
}

/** A worker as listed: Dagu's fields, and what placement needs beside them. */
export interface ListedWorker extends WorkerView {
  draining: boolean;
  incarnation: string;
}

/** Dagu's fields of a listed worker alone (GET /workers). */
export function workerView({ draining: _draining, incarnation: _incarnation, ...view }: ListedWorker): WorkerView {
  return view;
}

/** Every worker whose last heartbeat is under WORKER_KEPT_MS old, by id. */
export async function listWorkers(redis: Redis): Promise<ListedWorker[]> {
  const [now, flat] = await scripted(redis).troupeWorkers(WORKERS, WORKER_KEPT_MS);
  const beats = new Map<string, number>();
  for (let index = 0; index < flat.length; index += 2) beats.set(flat[index], Number(flat[index + 1]));
  if (beats.size === 0) return [];
  const ids = [...beats.keys()].sort();
  const entries = await redis.mget(ids.map(workerKey));
  const workers: ListedWorker[] = [];
  for (const [index, id] of ids.entries()) {
    const entry = entries[index];
    if (entry === null) continue; // expired between the two reads
    const state = JSON.parse(entry) as WorkerState;
    const beat = beats.get(id)!;
    workers.push({
      id, labels: state.labels, totalPollers: state.maxActiveRuns, busyPollers: state.runningTasks.length, runningTasks: state.runningTasks,
      lastHeartbeatAt: new Date(beat).toISOString(), healthStatus: healthOf(Number(now) - beat),
      draining: state.draining === true, incarnation: state.incarnation ?? '',
    });
  }
  return workers;
}
