// What the troupe command loads for a verb: each verb loads the modules it uses, so that `version`,
// `validate` and `dry` never load the engine, the store's LMDB, the worker pool, the HTTP server or
// auth's crypto, and a run without a server loads the engine but not the server's parts. Read from
// the URLs the module loader of the command's main thread is asked for
// (test/support/loaded-modules.mjs), in real processes: from source, and as built (the bundle of
// scripts/bundle-cli.mjs, whose files are mapped back to the source modules each holds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';
import { cli } from './cli-process.ts';
import { makeHome, type Home, type Outcome } from './cli-run.ts';

const recorder = resolve(import.meta.dirname, 'support', 'loaded-modules.mjs');
const built = resolve(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const bundle = resolve(import.meta.dirname, '..', 'dist', 'cli', 'bundle');

/**
 * Runs `troupe <args>` with the recorder; its outcome and every module URL loaded. `built`: the
 * build's dist/cli/main.js under plain node, instead of the source under tsx.
 */
async function traced(home: Home, args: string[], options: { home?: boolean; built?: boolean } = {}): Promise<Outcome & { modules: string[] }> {
  const list = join(home.dir, `modules-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`);
  await writeFile(list, '');
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TROUPE_'))), TROUPE_TEST_LOADED_MODULES: list };
  const command = options.built ? ['--import', recorder, built] : ['--import', 'tsx', '--import', recorder, cli];
  const child = spawn(process.execPath, [...command, ...args, ...(options.home === false ? [] : home.flag)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const code = await new Promise<number | null>((done) => child.once('close', done));
  const modules = (await readFile(list, 'utf8')).split('\n').filter((line) => line !== '');
  return { code, stdout, stderr, modules };
}

/** What a verb that reads no run must not load: the engine, LMDB, the pool, the server, auth's crypto. */
const ENGINE_AND_SERVER = [
  /\/src\/(engine|actors|scheduler|http|executors)\//, /\/src\/(main|open-engine|home-lock)\.ts$/, /\/src\/store\/lmdb-/, /\/src\/auth\/auth\.ts$/,
  /\/node_modules\/(lmdb|piscina|xstate|pino|jose|@node-rs\/argon2|openid-client|prom-client|undici|ws|uWebSockets\.js|dockerode|ssh2)\//,
];
/** What a run without a server does not load: the HTTP server, auth, metrics, the server's wiring. */
const SERVER_ONLY = [
  /\/src\/http\//, /\/src\/ops\/(index|metrics|resource-history|engine-sources)\.ts$/, /\/src\/main\.ts$/, /\/src\/auth\/auth\.ts$/,
  /\/node_modules\/(jose|@node-rs\/argon2|openid-client|prom-client|ws|uWebSockets\.js|cookie)\//,
];

/** What a run of shell steps without a server does not load: the worker pool (its steps run on the command's thread). */
const NO_POOL = [/\/node_modules\/piscina\//];

function loadedOf(modules: string[], patterns: RegExp[]): string[] {
  return modules.filter((url) => patterns.some((pattern) => pattern.test(url)));
}

const DAG = 'steps:\n  - name: hello\n    command: echo hello\n';

test('version, validate and dry load neither the engine nor the store, the pool, the server or auth, and answer as before', async () => {
  const home = await makeHome({ hello: DAG });
  try {
    const version = await traced(home, ['version'], { home: false });
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^troupe \d+\.\d+\.\d+/);
    const validate = await traced(home, ['validate', 'hello']);
    assert.equal(validate.code, 0, validate.stderr);
    assert.match(validate.stdout, /valid \(DAG hello, 1 steps\)/);
    const dry = await traced(home, ['dry', 'hello']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /dry run of DAG hello/);
    for (const [verb, outcome] of Object.entries({ version, validate, dry })) {
      // The recorder saw the command itself: an empty list would prove nothing.
      assert.ok(outcome.modules.some((url) => url.endsWith('/src/cli/main.ts')), `${verb}: the recorder saw no module`);
      assert.deepEqual(loadedOf(outcome.modules, ENGINE_AND_SERVER), [], `${verb} loads none of them`);
    }
    assert.ok(validate.modules.some((url) => url.includes('/src/definition/')), 'validate reads the definition');
  } finally {
    await home.remove();
  }
});

test('a run started without a server loads the engine but not the HTTP server, auth, metrics or the worker pool', async () => {
  const home = await makeHome({ hello: DAG });
  try {
    const run = await traced(home, ['start', 'hello']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /hello \| hello/);
    assert.ok(run.modules.some((url) => url.endsWith('/src/engine/engine.ts')), 'the engine ran the step');
    assert.deepEqual(loadedOf(run.modules, SERVER_ONLY), []);
    assert.deepEqual(loadedOf(run.modules, NO_POOL), [], 'a shell step runs on the command\'s thread');
  } finally {
    await home.remove();
  }
});

/** The bundle's files a built command loaded, each replaced by the source modules it holds (as `/src/...` and `/node_modules/...`). */
async function sourcesOf(modules: string[]): Promise<{ sources: string[]; outside: string[] }> {
  const inputs = JSON.parse(await readFile(join(bundle, 'inputs.json'), 'utf8')) as Record<string, string[]>;
  const prefix = `${pathToFileURL(bundle).href}/`;
  const sources: string[] = [];
  const outside: string[] = [];
  for (const url of modules) {
    if (url.startsWith('node:')) continue;
    if (!url.startsWith(prefix)) {
      outside.push(url);
      continue;
    }
    const held = inputs[url.slice(prefix.length)];
    assert.ok(held, `${url} is one of the bundle's files`);
    sources.push(...held.map((input) => `/${input.replace(/^(\.\.\/)+/, '')}`));
  }
  return { sources, outside };
}

test('as built, version, validate and dry read only the bundle, and none of its engine, store, pool, server or auth; a run reads the engine but not the server or the pool', async () => {
  assert.ok(existsSync(join(bundle, 'inputs.json')), 'the command is built (npm run build)');
  const home = await makeHome({ hello: DAG });
  try {
    const version = await traced(home, ['version'], { home: false, built: true });
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^troupe \d+\.\d+\.\d+/);
    const validate = await traced(home, ['validate', 'hello'], { built: true });
    assert.equal(validate.code, 0, validate.stderr);
    const dry = await traced(home, ['dry', 'hello'], { built: true });
    assert.equal(dry.code, 0, dry.stderr);
    for (const [verb, outcome] of Object.entries({ version, validate, dry })) {
      const { sources, outside } = await sourcesOf(outcome.modules);
      assert.ok(sources.includes('/src/cli/main.ts'), `${verb}: the recorder saw the bundle`);
      // The bin (dist/cli/main.js) imports the bundle's entry; nothing else is read from disk.
      assert.deepEqual(outside, [pathToFileURL(built).href], `${verb} reads the bundle alone`);
      assert.deepEqual(loadedOf(sources, ENGINE_AND_SERVER), [], `${verb} loads none of them`);
    }
    assert.ok((await sourcesOf(validate.modules)).sources.some((source) => source.startsWith('/src/definition/')), 'validate reads the definition');

    const run = await traced(home, ['start', 'hello'], { built: true });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /hello \| hello/);
    const { sources, outside } = await sourcesOf(run.modules);
    assert.ok(sources.includes('/src/engine/engine.ts'), 'the engine ran the step');
    assert.deepEqual(loadedOf([...sources, ...outside], [...SERVER_ONLY, ...NO_POOL]), []);
  } finally {
    await home.remove();
  }
});
