// How a stored run is read back: its summary row, its step views (one entry) and one entry per
// node. Shared by the store (main thread) and StoredRunReader (the run-details thread).
import { open, type Database, type RootDatabase } from 'lmdb';
import { dagRunIdProblem, isValidDagName, type NodeRecord, type RunRecord, type StepView } from '../core/index.ts';
import { keys } from './keys.ts';

export type Key = Array<string | number>;
export type StoredRun = Omit<RunRecord, 'nodes'> & { nodeCount: number };
export type StoredNode = Omit<NodeRecord, 'step'>;
export type ReadTransaction = ReturnType<RootDatabase['useReadTransaction']>;

/**
 * Whether a run of that name (and id) could be stored: names and ids are validated where they
 * enter (core/names.ts), so one that fails has no record. Reads check first, because LMDB throws
 * on a key over 1978 bytes, and a request may name anything.
 */
export const couldExist = (name: string, dagRunId?: string) => isValidDagName(name) && (dagRunId === undefined || dagRunIdProblem(dagRunId) === undefined);

export interface RunDatabases {
  runs: Database<StoredRun, Key>;
  nodes: Database<StoredNode, Key>;
  stepViews: Database<StepView[], Key>;
}

export function openRunDatabases(root: RootDatabase): RunDatabases {
  return { runs: root.openDB({ name: 'runs' }), nodes: root.openDB({ name: 'run-nodes' }), stepViews: root.openDB({ name: 'run-steps' }) };
}

/** Appends up to `limit` nodes of a stored run to `nodes`, from the first not there yet, each with its step. */
export function readNodes(dbs: RunDatabases, name: string, dagRunId: string, stored: StoredRun, views: StepView[], nodes: NodeRecord[], limit: number, transaction?: ReadTransaction): void {
  const range = { ...keys.nodesOf(name, dagRunId, stored.nodeCount), start: keys.node(name, dagRunId, nodes.length), limit };
  for (const { value } of dbs.nodes.getRange(transaction ? { ...range, transaction } : range)) {
    nodes.push({ ...value, step: views[nodes.length] } as NodeRecord);
  }
}

/** The record of a stored summary row and its nodes. */
export function recordOf(stored: StoredRun, nodes: NodeRecord[]): RunRecord {
  const { nodeCount: _nodeCount, ...summary } = stored;
  return { ...summary, nodes };
}

/**
 * Whole stored runs, read on a thread other than the store's (the run-details thread): lmdb-js
 * shares one environment between the threads of a process, so this sees every commit the store
 * made. It only reads.
 */
export class StoredRunReader {
  private readonly root: RootDatabase;
  private readonly dbs: RunDatabases;

  constructor(path: string) {
    this.root = open({ path, maxDbs: 32 });
    this.dbs = openRunDatabases(this.root);
  }

  /**
   * The run as one read transaction sees it, and its summary row's bytes: the version read, which
   * the store's `locate` answers too (a later write of the run changes them).
   */
  read(name: string, dagRunId: string): { record: RunRecord; version: Uint8Array } | undefined {
    if (!couldExist(name, dagRunId)) return undefined;
    const transaction = this.root.useReadTransaction();
    try {
      const key = keys.run(name, dagRunId);
      // getBinary copies the bytes; its types leave out the options its code takes.
      const version = (this.dbs.runs.getBinary as (key: Key, options: { transaction: ReadTransaction }) => Buffer | undefined)(key, { transaction });
      const stored = this.dbs.runs.get(key, { transaction });
      if (!version || !stored) return undefined;
      const nodes: NodeRecord[] = [];
      readNodes(this.dbs, name, dagRunId, stored, this.dbs.stepViews.get(key, { transaction }) ?? [], nodes, stored.nodeCount, transaction);
      return { record: recordOf(stored, nodes), version };
    } finally {
      transaction.done();
    }
  }

  close(): Promise<void> {
    return this.root.close();
  }
}
