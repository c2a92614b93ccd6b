// YAML text -> plain values plus a way to find the line of any field path.
import { LineCounter, Schema, parseAllDocuments, isNode, isPair, isMap, isScalar, isSeq, type CollectionTag, type Document, type Pair, type Tags, type YAMLMap } from 'yaml';
import type { Path, SpecIssue } from './issues.ts';
import { MAX_NESTING, nestingTooDeep } from './yaml-nesting.ts';
import { documentValue } from './yaml-values.ts';

export interface YamlDocument {
  value: unknown;
  lineOf(path: Path): number | undefined;
}

export interface YamlSource {
  documents: YamlDocument[];
  issues: SpecIssue[];
}

export function readYaml(text: string): YamlSource {
  const tooDeep = nestingTooDeep(text);
  if (tooDeep !== undefined) {
    const message = `collections nest deeper than ${MAX_NESTING} levels`;
    return { documents: [{ value: null, lineOf: () => undefined }], issues: [{ path: '', line: tooDeep, message }] };
  }
  const lineCounter = new LineCounter();
  // Merge keys (`<<: *base`) as YAML 1.1 and Dagu's Go parser read them. The library's own check
  // of unique keys compares each key with every earlier one (a 1 MB map took minutes): keys are
  // checked below, in one pass.
  const docs = parseAllDocuments(text, { lineCounter, uniqueKeys: false, prettyErrors: false, merge: true, logLevel: 'error', customTags: linearOmap });
  const issues: SpecIssue[] = [];
  if (!Array.isArray(docs)) {
    // An empty stream: one empty document.
    return { documents: [{ value: null, lineOf: () => undefined }], issues };
  }
  const seen = new Set<string>();
  for (const doc of docs) {
    for (const error of doc.errors) {
      const line = error.linePos?.[0]?.line ?? lineCounter.linePos(error.pos[0]).line;
      const message = error.message.split('\n')[0];
      // The parser reports one unclosed bracket once per level; one line says it.
      if (seen.has(`${line}:${message}`)) continue;
      seen.add(`${line}:${message}`);
      issues.push({ path: '', line, message });
    }
  }
  // Once per text, not per document: a file of many local DAGs stays linear.
  const mayHaveAliases = text.includes('*');
  const documents = docs.map((doc) => {
    let value: unknown = null;
    const duplicates = doc.errors.length === 0 ? duplicateKeys(doc, lineCounter) : [];
    issues.push(...duplicates);
    if (doc.errors.length === 0 && duplicates.length === 0) {
      const expanded = documentValue(doc, mayHaveAliases);
      if ('problem' in expanded) issues.push({ path: '', line: rangeLine(doc.contents, lineCounter), message: expanded.problem });
      else value = expanded.value;
    }
    const pairs = new WeakMap<YAMLMap, Map<string, Pair>>();
    return { value, lineOf: (path: Path) => lineOf(doc, lineCounter, path, pairs) };
  });
  return { documents, issues };
}

const OMAP = 'tag:yaml.org,2002:omap';
const pairsTag = new Schema({ resolveKnownTags: true }).knownTags['tag:yaml.org,2002:pairs'] as CollectionTag;

/**
 * `!!omap` read as `!!pairs` are, keeping its tag: the library's own compares each key with every
 * earlier one (a 1 MB ordered map took most of a minute); yaml-values.ts makes it a Map and finds
 * a repeated key in one pass.
 */
function linearOmap(tags: Tags): Tags {
  return [{ ...pairsTag, tag: OMAP }, ...tags.filter((tag) => typeof tag === 'string' || tag.tag !== OMAP)];
}

/** Keys repeated within a map, each reported at its repetition. */
function duplicateKeys(doc: Document, counter: LineCounter): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isPair(node)) {
      stack.push(node.value);
    } else if (isMap(node)) {
      const keys = new Set<string>();
      for (const pair of node.items) {
        const key = keyText(pair.key);
        // Merge keys may repeat; a key that is itself a collection is compared by its text.
        // (The library reads a merge key's value as a symbol: its text is "Symbol(<<)".)
        if (key !== undefined && !(isScalar(pair.key) && (key === '<<' || typeof pair.key.value === 'symbol'))) {
          if (keys.has(key)) issues.push({ path: '', line: rangeLine(pair.key, counter), message: `Map keys must be unique: "${key.slice(0, 60)}" is repeated` });
          keys.add(key);
        }
        stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      // One at a time: spreading a sequence of 100,000 items overflows the call stack.
      for (const item of node.items) stack.push(item);
    }
  }
  return issues;
}

function lineOf(doc: Document, counter: LineCounter, path: Path, index: WeakMap<YAMLMap, Map<string, Pair>>): number | undefined {
  // Walk as deep as the path exists; report the key's line for map entries. A map's keys are
  // indexed on first use: a definition with thousands of problems in one map stays linear.
  let node: unknown = doc.contents;
  let line: number | undefined = rangeLine(node, counter);
  for (const part of path) {
    if (isMap(node)) {
      let byKey = index.get(node);
      if (!byKey) {
        byKey = new Map();
        for (const item of node.items) {
          const key = keyText(item.key);
          if (key !== undefined && !byKey.has(key)) byKey.set(key, item);
        }
        index.set(node, byKey);
      }
      const pair = byKey.get(String(part));
      if (!pair) break;
      line = rangeLine(pair.key, counter) ?? line;
      node = pair.value;
    } else if (isNode(node) && 'items' in node && Array.isArray((node as { items: unknown[] }).items) && typeof part === 'number') {
      const item = (node as { items: unknown[] }).items[part];
      if (item === undefined) break;
      line = rangeLine(item, counter) ?? line;
      node = item;
    } else {
      break;
    }
  }
  return line;
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  if (isNode(key)) return key.toString();
  return key === undefined || key === null ? undefined : String(key);
}

function rangeLine(node: unknown, counter: LineCounter): number | undefined {
  if (isNode(node) && node.range) return counter.linePos(node.range[0]).line;
  return undefined;
}

/** Parses a YAML document that must be a map (the config file); throws on syntax errors. */
export function parseYamlMap(text: string): Record<string, unknown> {
  const { documents, issues } = readYaml(text);
  if (issues.length > 0) throw new Error(`line ${issues[0].line}: ${issues[0].message}`);
  const value = documents[0]?.value ?? {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('the document must be a map');
  return value as Record<string, unknown>;
}
