// What travels with a run placed on a worker, and back. The server plans the attempt (its
// variables, params, env and first record) and hands the whole RunInput over; the worker runs it
// with its own engine under its own folders. Paths cross as the server names them: the worker
// moves them under its own folders as the run arrives and back as it reports.
import { isAbsolute, relative, resolve } from 'node:path';
import type { RunFinishedEvent, RunInput } from '../actors/index.ts';
import type { RunRecord } from '../core/index.ts';

/** The folders that a run's paths are under, as one side names them. */
export interface Roots {
  /**
   * The run's own log folder, when its DAG's `logDir` puts it outside `logs`: first, so that its
   * paths move with it. Each side has its own (the worker's is under its logs folder).
   */
  runLogs?: string;
  logs: string;
  dags: string;
}

export interface RunPayload {
  input: RunInput;
  /** The server's folders: where the run's paths point on the server. */
  roots: Roots;
  /** The DAG files the run calls (file name -> text), directly or through the files it calls. */
  dagFiles: Record<string, string>;
  /** The part of the server's environment its steps would see (PATH, HOME...): the worker's own takes its place. */
  systemEnv: Record<string, string>;
  /** The worker process it was handed to: another process of the same worker does not run it. */
  incarnation: string;
  /**
   * The sub DAG runs an earlier attempt of the run started, at any depth, as the server stores
   * them: a retried call goes on from its sub DAG run's earlier attempt, as it would on the server.
   */
  subRuns?: RunRecord[];
}

/**
 * The run's variables with the worker's system environment in place of the server's: a variable
 * the run took from the server's (unchanged by the DAG's env or params) takes the worker's value,
 * or goes when the worker has none; the worker's others are added.
 */
export function withSystemEnv(input: RunInput, server: Readonly<Record<string, string>>, worker: Readonly<Record<string, string>>): RunInput {
  const baseEnv = { ...input.plan.baseEnv };
  for (const [key, value] of Object.entries(server)) {
    if (baseEnv[key] !== value) continue;
    if (Object.hasOwn(worker, key)) baseEnv[key] = worker[key];
    else delete baseEnv[key];
  }
  for (const [key, value] of Object.entries(worker)) if (!Object.hasOwn(baseEnv, key) && !Object.hasOwn(server, key)) baseEnv[key] = value;
  return { ...input, plan: { ...input.plan, baseEnv } };
}

/** One attempt of a root run: the key its job and its stream items go under. */
export function attemptKey(record: Pick<RunRecord, 'name' | 'dagRunId' | 'attemptId'>): string {
  return `${record.name}/${record.dagRunId}/${record.attemptId}`;
}

/** What a worker sends back, by kind (the stream items' `kind`). */
export type Report =
  | { kind: 'record'; record: RunRecord; changed: number[] }
  | { kind: 'log'; path: string; line: string }
  /** Bytes of a step's output file from `offset` on, base64. */
  | { kind: 'output'; path: string; offset: number; data: string }
  | { kind: 'finished'; end: RunFinishedEvent };

/**
 * Moves every string of `value` that is a path under one of `from`'s folders to the same place
 * under `to`'s; a folder `to` lacks moves nothing.
 */
export function movePaths<T>(value: T, from: Roots, to: Roots): T {
  const pairs = (Object.keys(from) as Array<keyof Roots>).flatMap((key) => {
    const source = from[key];
    const target = to[key];
    return source === undefined || target === undefined ? [] : [[resolve(source), resolve(target)] as const];
  });
  const move = (text: string): string => {
    for (const [source, target] of pairs) {
      if (text === source) return target;
      if (text.startsWith(source + '/')) return target + text.slice(source.length);
    }
    return text;
  };
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return move(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === 'object') {
      const copy: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(item)) copy[key] = walk(field);
      return copy;
    }
    return item;
  };
  return walk(value) as T;
}

/** An empty segment, or one that is `.` or `..`: a path with none is as plain as it reads. */
const IRREGULAR = /\/\/|(^|\/)\.\.?(\/|$)/;

/** Whether `path` is `root` or inside it, with no way out through `..`. */
export function isUnder(root: string, path: string): boolean {
  if (!isAbsolute(path)) return false;
  // Plain absolute paths (every report's): their text says it, without resolving either.
  if (isAbsolute(root) && !IRREGULAR.test(path) && !IRREGULAR.test(root)) {
    const folder = root.endsWith('/') ? root.slice(0, -1) : root;
    return folder === '' || path === folder || path.startsWith(folder + '/');
  }
  const inside = relative(resolve(root), resolve(path));
  return inside === '' || (inside !== '..' && !inside.startsWith('../') && !isAbsolute(inside));
}
