// Worker-thread entry (the run-details thread): a large stored run's details document, decoded
// from the store and encoded as the API's bytes off the main thread, then moved to it, not copied
// (http/stored-details.ts). It opens the store's environment once per home, and only reads.
import { StoredRunReader } from './store/index.ts';
// The two modules themselves, not their folders' index.ts: those load the step pool and the HTTP
// server (uWS), which this thread never uses.
import { movedAnswer } from './executors/moved-answer.ts';
import { detailsDocumentOf, runDetailsParts } from './http/present.ts';
import type { StoredDetailsAnswer } from './http/index.ts';

export interface StoredDetailsTask {
  dataDir: string;
  name: string;
  dagRunId: string;
  keys: readonly string[];
}

const readers = new Map<string, StoredRunReader>();

export default function readStoredDetails({ dataDir, name, dagRunId, keys }: StoredDetailsTask): StoredDetailsAnswer {
  let reader = readers.get(dataDir);
  if (!reader) readers.set(dataDir, reader = new StoredRunReader(dataDir));
  const read = reader.read(name, dagRunId);
  if (!read) return { kind: 'absent' };
  const details = runDetailsParts(read.record);
  const built = detailsDocumentOf(details, keys);
  // The whole buffer is moved: a small one from Buffer's shared pool is copied to one of its own first.
  const document = built.byteOffset === 0 && built.buffer.byteLength === built.length ? built : new Uint8Array(built);
  const start = Buffer.byteLength(`{${JSON.stringify(keys[0])}:`);
  const length = details.reduce((sum, part) => sum + part.length, 0);
  return movedAnswer({ kind: 'ok', document, details: { start, end: start + length }, version: read.version }, [document.buffer as ArrayBuffer]);
}
