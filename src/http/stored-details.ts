// The details of a large run that the store does not hold in memory (read for the first time since
// the start, or one that left the store's cache of recent runs): decoded and encoded on the
// run-details thread, which answers the whole document, moved to this thread, not copied. Decoding
// and encoding 10,000 nodes took the main thread 0.3 - 0.5 s of CPU, in slices; the thread's answer
// costs it a message. Other runs, and any read the thread cannot answer, take the main thread's
// path (present.ts).
import { isFinalRunStatus, runKey, type RunLocation, type RunStore } from '../core/index.ts';
import { runIdOf } from '../engine/index.ts';
import { detailsDocumentOf, runDetailsDocument } from './present.ts';
import type { ApiDeps, ReadStoredDetails } from './types.ts';

/**
 * Runs with fewer nodes are read on the main thread, so that a server of small runs never starts
 * the thread (11 - 13 ms of the main thread's CPU). Measured side by side: the first read of a run
 * of 255 nodes cost the main thread 6.5 - 30 ms, one of 256 through the started thread 3.6 - 6.2 ms.
 */
export const OFF_THREAD_NODES = 256;

/** Answers kept: each holds a large run's documents (13 MB each at 10,000 steps, 6.5 MB a key). */
const KEPT_RUNS = 8;

interface Kept {
  version: Uint8Array;
  /** The run's details: a view into the first document. */
  details: Uint8Array;
  /** By key list. */
  documents: Map<string, Uint8Array>;
}

interface Answers {
  /**
   * Finished runs' answers by run, newest last. An answer is good while the run's stored summary
   * row is the one it was read with: a write of the run writes the row again, and a finished run is
   * only written again by a retry, which changes its status and times.
   */
  kept: Map<string, Kept>;
  /** Reads under way, so that readers of the same version of a run wait for one answer. */
  reading: Map<string, { version: Uint8Array; answer: Promise<Kept | undefined> }>;
}

/** By store: a process may serve several homes (tests, embedders). */
const answersByStore = new WeakMap<RunStore, Answers>();

const sameBytes = (one: Uint8Array, other: Uint8Array) => Buffer.compare(one, other) === 0;

/**
 * The document of `keys` (each holding the run's details) for the run `name` and `dagRunId`
 * (`latest` allowed) names, as `runDetailsDocument` makes it, byte for byte; 404 when there is none.
 */
export async function runDetailsAnswer(deps: ApiDeps, name: string, dagRunId: string, keys: readonly string[]): Promise<Buffer> {
  const id = runIdOf(deps.runs, name, dagRunId);
  const location = id && deps.runs.locate?.(id.name, id.dagRunId);
  if (id && location && 'stored' in location && deps.readStoredDetails && location.stored.nodeCount >= OFF_THREAD_NODES) {
    const answer = await storedDetails(deps, id.name, id.dagRunId, location.stored.version, keys, deps.readStoredDetails);
    if (answer) return documentOf(answer, keys);
  }
  return runDetailsDocument(await deps.engine.readRun(name, dagRunId), keys);
}

/** The document of `keys`: the thread's, or one made here from its details (another route's keys). */
function documentOf(answer: Kept, keys: readonly string[]): Buffer {
  const signature = keys.join(',');
  let document = answer.documents.get(signature);
  if (!document) answer.documents.set(signature, document = detailsDocumentOf([answer.details], keys));
  return Buffer.from(document.buffer, document.byteOffset, document.length);
}

/** The run's details as the thread read them (or as kept from an earlier read); undefined when the thread could not answer. */
function storedDetails(deps: ApiDeps, name: string, dagRunId: string, version: Uint8Array, keys: readonly string[], read: ReadStoredDetails): Promise<Kept | undefined> {
  let answers = answersByStore.get(deps.runs);
  if (!answers) answersByStore.set(deps.runs, answers = { kept: new Map(), reading: new Map() });
  const { kept, reading } = answers;
  const key = runKey(name, dagRunId);
  const known = kept.get(key);
  if (known && sameBytes(known.version, version)) {
    kept.delete(key);
    kept.set(key, known);
    return Promise.resolve(known);
  }
  const under = reading.get(key);
  if (under && sameBytes(under.version, version)) return under.answer;
  const answer = read(name, dagRunId, keys).then((answer) => {
    if (answer.kind !== 'ok') return undefined;
    const { document, details: { start, end } } = answer;
    const fresh: Kept = { version: answer.version, details: document.subarray(start, end), documents: new Map([[keys.join(','), document]]) };
    if (stillStored(deps.runs.locate?.(name, dagRunId), answer.version)) {
      kept.delete(key);
      kept.set(key, fresh);
      if (kept.size > KEPT_RUNS) kept.delete(kept.keys().next().value!);
    }
    return fresh;
  }, () => undefined).finally(() => {
    if (reading.get(key)?.answer === answer) reading.delete(key);
  });
  reading.set(key, { version, answer });
  return answer;
}

/** Whether the run is still stored as it was read, finished, and not held in memory (whose record answers then). */
function stillStored(location: RunLocation | undefined, version: Uint8Array): boolean {
  return location !== undefined && 'stored' in location && isFinalRunStatus(location.stored.status) && sameBytes(location.stored.version, version);
}
