// The embedding API: run the engine (and optionally the API server) inside another Node program.
import { openEngine, startTroupe, type EngineHandle, type QueueConfig, type TlsConfig, type Troupe, type TroupeConfig } from './main.ts';

export type { Engine, EngineEvent, EngineListener, FollowOptions, StartOptions, InlineOptions } from './engine/index.ts';
export type { EventFilter } from './core/index.ts';
export type { EnqueueOptions, QueueListing } from './scheduler/index.ts';
export type { RunRecord, NodeRecord, Dag, Step } from './core/index.ts';
export { RunStatus, NodeStatus, AppError } from './core/index.ts';
export type { EngineHandle, Troupe, TroupeConfig, QueueConfig, TlsConfig };

export interface EmbedOptions {
  /** Holds dags/, data/ and logs/ unless they are given one by one. */
  home: string;
  dagsDir?: string;
  dataDir?: string;
  logDir?: string;
  maxThreads?: number;
  /** Custom queues and their maxConcurrency; `engine.setQueueLimit` changes one later. */
  queues?: QueueConfig[];
}

/** An engine with its LMDB store, DAG files, logs and worker pool; `close()` stops every run first. */
export function createEngine(options: EmbedOptions): Promise<EngineHandle> {
  return openEngine(options);
}

export interface ServeOptions {
  host?: string;
  port?: number;
  carrier?: 'auto' | 'uws' | 'node';
  /** Serve HTTPS with these PEM files (`troupe.server.scheme` is then `https`); a bad pair rejects before anything is opened. */
  tls?: TlsConfig;
}

/** The engine plus the REST API on host:port (port 0 picks a free one). */
export function createServer(options: EmbedOptions & ServeOptions): Promise<Troupe> {
  return startTroupe(options);
}
