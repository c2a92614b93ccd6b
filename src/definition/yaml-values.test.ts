import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments, type Document } from 'yaml';
import { documentValue } from './yaml-values.ts';
import { readYaml } from './yaml-source.ts';

const options = { uniqueKeys: false, prettyErrors: false, merge: true, logLevel: 'error' } as const;

function only(text: string): Document {
  const docs = parseAllDocuments(text, options);
  assert.ok(Array.isArray(docs) && docs.length === 1 && docs[0].errors.length === 0, text);
  return docs[0] as Document;
}

function valueOf(text: string): unknown {
  const read = documentValue(only(text), true);
  assert.ok('value' in read, `${text}: ${'problem' in read ? read.problem : ''}`);
  return read.value;
}

function problemOf(text: string): string {
  const read = documentValue(only(text), true);
  assert.ok('problem' in read, text);
  return read.problem;
}

test('the values are the yaml library\'s own conversion, aliases, merge keys and odd keys included', () => {
  for (const text of [
    'a: 1\nb: [x, 2, true, null, 1.5]\nc: {d: e}\n',
    'base: &b {x: 1, y: 2}\nuse: *b\nmerged:\n  <<: *b\n  y: 3\nmany:\n  <<: [*b, {z: 4}]\n',
    'first: &a 1\nsecond: &a 2\nthird: *a\n',
    '? [a, b]\n: c\n? {k: v}\n: d\n~: e\n1: f\n',
    '__proto__: x\ntoString: y\nconstructor: {a: 1}\n',
    'steps:\n  - [a: 1, b]\n',
    'big: 12345678901234567890\nhex: 0x1f\n',
    '%YAML 1.1\n---\nwhen: 2001-12-14t21:59:43.10-05:00\nyes: on\n',
    'set: !!set {a, b}\nomap: !!omap [a: 1, b: 2]\npairs: !!pairs [a: 1, a: 2]\n',
    'k: &k key\n*k : value\n',
    'list: &l [1, 2]\nagain: *l\n',
  ]) {
    assert.deepEqual(valueOf(text), only(text).toJS({ maxAliasCount: 10_000 }), text);
  }
});

test('an alias is the value its anchor built, shared; each names the latest anchor of its name before it', () => {
  const value = valueOf('a: &x [1]\nb: *x\nc: &x [2]\nd: *x\n') as Record<string, unknown>;
  assert.equal(value.a, value.b);
  assert.deepEqual(value.d, [2]);
});

test('alias bombs, cycles and unknown anchors are problems with their reason', () => {
  const laughs = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
    ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)].join('\n');
  assert.match(problemOf(laughs), /^too many aliases/);
  assert.match(problemOf('steps: &s\n  - *s\n'), /alias names a node that contains it/);
  assert.match(problemOf('a: &a\n  <<: *a\n'), /alias names a node that contains it/);
  assert.match(problemOf('a: &a\n  b: {<<: [*a]}\n'), /alias names a node that contains it/);
  assert.equal(problemOf('a: *nowhere\n'), 'alias *nowhere names no anchor before it');
  assert.equal(problemOf('a: 1\n<<: 2\n'), 'the document cannot be read: Merge sources must be maps or map aliases');
  const wide = `m: &m {${Array.from({ length: 200 }, (_, i) => `k${i}: ${i}`).join(', ')}}\nx: [${Array(9_999).fill('*m').join(', ')}]\n`;
  assert.match(problemOf(wide), /aliases expand the document to more than 1000000 values/);
  // Merging a map again and again is work even where nothing is copied.
  const merges = `m: &m {${Array.from({ length: 200 }, (_, i) => `k${i}: ${i}`).join(', ')}}\nx:\n  <<: [${Array(5_001).fill('*m').join(', ')}]\n`;
  assert.match(problemOf(merges), /aliases expand the document to more than 1000000 values/);
});

test('!!omap is a Map as the library made it, its repeated keys a problem, found in one pass', () => {
  const { documents, issues } = readYaml('x: !!omap [a: 1, b: 2]\n');
  assert.deepEqual(issues, []);
  assert.deepEqual((documents[0].value as { x: unknown }).x, new Map([['a', 1], ['b', 2]]));
  assert.deepEqual(readYaml('x: !!omap [a: 1, a: 2]\n').issues.map((issue) => issue.message), ['the document cannot be read: Ordered maps must not include duplicate keys']);
});

test('merge keys may repeat in a map, each adding what the map lacks', () => {
  const { documents, issues } = readYaml('b: &b {x: 1}\nc: &c {x: 3, y: 2}\na:\n  <<: *b\n  <<: *c\n');
  assert.deepEqual(issues, []);
  assert.deepEqual((documents[0].value as { a: unknown }).a, { x: 1, y: 2 });
});
