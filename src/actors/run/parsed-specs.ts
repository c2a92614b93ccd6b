// The parse of a running DAG's definition text, kept for the sub DAG runs it starts: each call
// looks up the local DAGs of its parent's text, and a fan-out of 100 items over a large definition
// would otherwise parse it 100 times, holding the event loop each time.
import { parseDag, type ParseResult } from '../../spec/index.ts';

/** A few texts: the runs calling sub DAGs at one time; a 1 MiB text's parse weighs tens of MB. */
const KEPT = 4;
const parsed = new Map<string, { name: string; baseDir: string; result: ParseResult }>();

export function parsedSpec(specText: string, name: string, baseDir: string): ParseResult {
  let entry = parsed.get(specText);
  // Most recently used last: the oldest entry is the one dropped.
  parsed.delete(specText);
  if (!entry || entry.name !== name || entry.baseDir !== baseDir) {
    entry = { name, baseDir, result: parseDag(specText, { nameOverride: name, baseDir }) };
    if (parsed.size >= KEPT) parsed.delete(parsed.keys().next().value!);
  }
  parsed.set(specText, entry);
  return entry.result;
}
