// The only place that builds LMDB keys. Arrays sort element by element (ordered-binary).

const MAX_TIME = Number.MAX_SAFE_INTEGER;

export const keys = {
  run: (name: string, dagRunId: string) => [name, dagRunId],
  node: (name: string, dagRunId: string, index: number) => [name, dagRunId, index],
  nodesOf: (name: string, dagRunId: string, count: number) => ({ start: [name, dagRunId, 0], end: [name, dagRunId, count] }),
  /** Every node row of a run, however many attempts wrote. */
  allNodesOf: (name: string, dagRunId: string) => ({ start: [name, dagRunId, 0], end: [name, dagRunId, MAX_TIME] }),
  /** Run ids of `name` that begin with `prefix` (ids sort as strings inside a name). */
  runIdsStartingWith: (name: string, prefix: string) => ({ start: [name, prefix], end: [name, `${prefix}\uffff`] }),
  spec: (name: string, dagRunId: string) => [name, dagRunId],
  byTime: (createdAtMs: number, name: string, dagRunId: string) => [createdAtMs, name, dagRunId],
  byName: (name: string, createdAtMs: number, dagRunId: string) => [name, createdAtMs, dagRunId],
  /** Newest first: reverse ranges start at the upper bound. */
  byNameNewestFirst: (name: string) => ({ start: [name, MAX_TIME], end: [name], reverse: true }),
  /** Oldest first, created before `beforeMs`. */
  byNameOlderThan: (name: string, beforeMs: number) => ({ start: [name, 0], end: [name, beforeMs] }),
  /** A key after every run of `name` and before those of the next name. */
  byNameAfter: (name: string) => [name, MAX_TIME],
  /** A name's runs created in [fromMs, toMs], newest first. */
  byNameBetween: (name: string, fromMs: number, toMs: number) => ({ start: [name, toMs, '\uffff'], end: [name, fromMs], reverse: true }),
  byStatus: (status: number, createdAtMs: number, name: string, dagRunId: string) => [status, createdAtMs, name, dagRunId],
  /** A status's runs created in [fromMs, toMs], newest first. */
  byStatusBetween: (status: number, fromMs: number, toMs: number) => ({ start: [status, toMs, '\uffff'], end: [status, fromMs], reverse: true }),
  /** Marks an index built for the runs stored before it existed. */
  indexBuilt: (index: string) => ['index-built', index],
  byTimeNewestFirst: (fromMs = 0, toMs = MAX_TIME) => ({ start: [toMs, '\uffff'], end: [fromMs], reverse: true }),
  suspended: (fileName: string) => ['suspended', fileName],
  /** A new run whose node rows are written ahead of its summary, until its first save. */
  writtenAhead: (name: string, dagRunId: string) => ['written-ahead', name, dagRunId],
  allWrittenAhead: () => ({ start: ['written-ahead'], end: ['written-ahead', '\uffff'] }),
  /** A queue's items sort by their sequence number: first in, first out. */
  queueItem: (queue: string, seq: number) => [queue, seq],
  queueItemOf: (name: string, dagRunId: string) => [name, dagRunId],
  queueSequence: () => ['sequence'],
  probe: () => ['probe'],
  /** The newest event number retention removed. */
  eventsPrunedThrough: () => ['events-pruned-through'],
  user: (id: string) => [id],
  username: (username: string) => [username],
  apiKey: (id: string) => [id],
  apiKeyHash: (keyHash: string) => [keyHash],
  authSecret: (name: string) => ['secret', name],
  /** An idempotent submit's answer: by the caller's scope, then the key the client gave. */
  idempotentAnswer: (scope: string, key: string) => [scope, key],
  idempotentByTime: (storedAtMs: number, scope: string, key: string) => [storedAtMs, scope, key],
  /** Answers stored before `beforeMs`, oldest first. */
  idempotentStoredBefore: (beforeMs: number) => ({ start: [0], end: [beforeMs] }),
};
