// The module boundaries of docs/architecture.md, read from the import graph of src/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const src = resolve(import.meta.dirname, '..', 'src');

/** Folders each folder may import from (besides itself). The root files (main.ts, index.ts) may import anything. */
const allowed: Record<string, string[]> = {
  core: [],
  logging: [],
  definition: ['core'],
  store: ['core', 'logging'],
  executors: ['core', 'logging'],
  actors: ['core', 'definition', 'logging'],
  auth: ['core', 'logging'],
  http: ['core', 'definition', 'actors', 'ops', 'logging', 'auth'],
  ops: ['core', 'actors'],
  cli: ['core', 'definition', 'logging', 'auth', 'ops', '(root)'],
};

/** Each third-party package belongs to one folder (undici to three: the http executor's requests, http's forwarding to remote nodes, and the command's calls to a server). */
const owners: Record<string, string | string[]> = {
  lmdb: 'store', xstate: 'actors', piscina: 'executors', 'jq-wasm': 'executors', ssh2: 'executors', dockerode: 'executors', nodemailer: 'executors',
  undici: ['executors', 'http', 'cli'], tar: 'executors', yazl: 'executors', yauzl: 'executors', picomatch: 'executors',
  'uWebSockets.js': 'http', yaml: 'definition', croner: 'definition', 'prom-client': 'ops', 'parse-duration': 'ops', pino: 'logging',
  jose: 'auth', '@node-rs/argon2': 'auth', 'rate-limiter-flexible': 'auth', 'openid-client': 'auth', cookie: 'http',
};

/** Entry points of a folder besides index.ts: pool worker threads log through worker-log.ts, which loads pino only when they log. */
const otherEntries: Record<string, string[]> = { logging: ['worker-log.ts'] };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

function folderOf(path: string): string {
  const parts = relative(src, path).split(sep);
  return parts.length === 1 ? '(root)' : parts[0];
}

function importsOf(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^'";]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|typeof import\(['"]([^'"]+)['"]\)/g)) {
    found.push(match[1] ?? match[2] ?? match[3]);
  }
  return found;
}

test('every import respects the direction of the folders and goes through index.ts', () => {
  const problems: string[] = [];
  for (const file of sourceFiles(src)) {
    const from = folderOf(file);
    for (const specifier of importsOf(file)) {
      if (!specifier.startsWith('.')) {
        const pkg = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
        const owner = owners[pkg];
        if (owner && ![owner].flat().includes(from)) problems.push(`${relative(src, file)} imports ${pkg}, which belongs to ${[owner].flat().join('/ and ')}/`);
        continue;
      }
      const target = resolve(dirname(file), specifier);
      const to = folderOf(target);
      if (to === from) continue;
      if (from === '(root)') continue;
      if (!allowed[from].includes(to)) problems.push(`${relative(src, file)} imports ${relative(src, target)} (${from} -> ${to})`);
      else if (to !== '(root)' && relative(join(src, to), target) !== 'index.ts' && !(otherEntries[to] ?? []).includes(relative(join(src, to), target))) {
        problems.push(`${relative(src, file)} imports ${relative(src, target)} instead of ${to}/index.ts`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('the checker itself sees a violation', () => {
  assert.deepEqual(importsOf(join(src, 'http', 'routes', 'dags.ts')).filter((s) => s.includes('core')), ['../../core/index.ts']);
  assert.ok(!allowed.http.includes('store') && !allowed.actors.includes('executors'));
});
