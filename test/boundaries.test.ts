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
  catalog: ['core', 'definition', 'logging'],
  actors: ['core', 'definition', 'logging'],
  scheduler: ['core', 'definition', 'logging', 'actors', 'catalog'],
  engine: ['core', 'definition', 'logging', 'actors', 'catalog', 'scheduler'],
  auth: ['core', 'logging'],
  http: ['core', 'definition', 'engine', 'scheduler', 'catalog', 'ops', 'logging', 'auth'],
  ops: ['core', 'engine', 'scheduler'],
  workers: ['core', 'logging'],
  tracing: ['core', 'logging'],
  distributed: ['core', 'logging', 'actors', 'workers'],
  config: ['core', 'definition', 'logging', 'auth', 'ops'],
  cli: ['core', 'definition', 'logging', 'auth', 'ops', 'config', '(root)'],
};

/** Each third-party package belongs to one folder (undici to three: the http executor's requests, http's forwarding to remote nodes, and the command's calls to a server). */
const owners: Record<string, string | string[]> = {
  lmdb: 'store', xstate: ['actors', 'scheduler', 'engine'], piscina: 'executors', 'jq-wasm': 'executors', ssh2: 'executors', dockerode: 'executors', nodemailer: 'executors',
  undici: ['executors', 'http', 'cli'], tar: 'executors', yazl: 'executors', yauzl: 'executors', picomatch: 'executors',
  'uWebSockets.js': 'http', yaml: 'definition', croner: 'definition', 'prom-client': 'ops', 'parse-duration': 'ops', pino: 'logging',
  '@opentelemetry/api': 'tracing', '@opentelemetry/core': 'tracing', '@opentelemetry/resources': 'tracing', '@opentelemetry/sdk-trace': 'tracing',
  '@opentelemetry/exporter-trace-otlp-http': 'tracing', '@opentelemetry/exporter-trace-otlp-proto': 'tracing', '@opentelemetry/exporter-trace-otlp-grpc': 'tracing', '@grpc/grpc-js': 'tracing',
  ioredis: ['workers', 'distributed'], bullmq: 'workers', jose: 'auth', '@node-rs/argon2': 'auth', 'rate-limiter-flexible': 'auth', 'openid-client': 'auth', cookie: 'http',
};

/**
 * Entry points of a folder besides index.ts: pool worker threads log through worker-log.ts, which
 * loads pino only when they log; the configuration reads the log's settings, auth's settings and
 * ops' durations without the packages the rest of those folders load (pino, jose, argon2,
 * prom-client), so that a command's verb
 * that reads a configuration starts fast.
 */
const otherEntries: Record<string, string[]> = { logging: ['worker-log.ts', 'log-settings.ts'], auth: ['auth-settings.ts'], ops: ['duration.ts'] };

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

/** The files of src/ that `file` imports (type imports counted). */
const localImports = (file: string) => importsOf(file).filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s));

/** The circles of a graph of files, each as its files, by Tarjan's strongly connected components. */
function circles(files: string[], targetsOf: (file: string) => string[]): string[][] {
  const edges = new Map(files.map((file) => [file, targetsOf(file).filter((target) => files.includes(target))]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const target of edges.get(file)!) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(relative(src, member));
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

test('no import circle among the modules of src/, type imports counted', () => {
  assert.deepEqual(circles(sourceFiles(src), localImports), []);
});

test('the circle check sees a circle', () => {
  const graph: Record<string, string[]> = { [join(src, 'a.ts')]: [join(src, 'b.ts')], [join(src, 'b.ts')]: [join(src, 'c.ts')], [join(src, 'c.ts')]: [join(src, 'a.ts')], [join(src, 'd.ts')]: [join(src, 'a.ts')] };
  assert.deepEqual(circles(Object.keys(graph), (file) => graph[file]), [['a.ts', 'b.ts', 'c.ts']]);
});
