// The parse of a running DAG's definition text, kept for the sub DAG runs it starts: each call
// looks up the local DAGs of its parent's text, and a fan-out of 100 items over a large definition
// would otherwise parse it 100 times. Concurrent calls share one parse (on the parse worker when
// the text is large).
import type { DefinitionParser, ParseResult } from '../../spec/index.ts';

/** A few texts: the runs calling sub DAGs at one time; a 1 MiB text's parse weighs tens of MB. */
const KEPT = 4;
const parsed = new Map<string, { name: string; baseDir: string; result: Promise<ParseResult> }>();

export function parsedSpec(parser: DefinitionParser, specText: string, name: string, baseDir: string): Promise<ParseResult> {
  let entry = parsed.get(specText);
  // Most recently used last: the oldest entry is the one dropped.
  parsed.delete(specText);
  if (!entry || entry.name !== name || entry.baseDir !== baseDir) {
    const result = parser.parse(specText, { nameOverride: name, baseDir });
    const fresh = { name, baseDir, result };
    // A parse that could not finish (the server closing) is not kept.
    result.catch(() => { if (parsed.get(specText) === fresh) parsed.delete(specText); });
    entry = fresh;
    if (parsed.size >= KEPT) parsed.delete(parsed.keys().next().value!);
  }
  parsed.set(specText, entry);
  return entry.result;
}
