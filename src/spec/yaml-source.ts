// YAML text -> plain values plus a way to find the line of any field path.
import { LineCounter, parseAllDocuments, isNode, isPair, isMap, type Document } from 'yaml';
import type { Path, SpecIssue } from './issues.ts';
import { MAX_NESTING, nestingTooDeep } from './yaml-nesting.ts';

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
  const docs = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
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
  const documents = docs.map((doc) => ({
    value: doc.errors.length > 0 ? null : doc.toJS({ maxAliasCount: 100 }),
    lineOf: (path: Path) => lineOf(doc, lineCounter, path),
  }));
  return { documents, issues };
}

function lineOf(doc: Document, counter: LineCounter, path: Path): number | undefined {
  // Walk as deep as the path exists; report the key's line for map entries.
  let node: unknown = doc.contents;
  let line: number | undefined = rangeLine(node, counter);
  for (const part of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && keyText(item.key) === String(part));
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
  if (isNode(key) && 'value' in key) return String((key as { value: unknown }).value);
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
