// `troupe worker`'s command line, and the servers' --redis: what the command refuses before it
// starts anything (exit 2 for a wrong command line, 1 for a Redis URL that cannot be used), never
// showing a password; Dagu's spellings of the worker's flags read as troupe's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_KEEP_RUNS, DEFAULT_MAX_ACTIVE_RUNS, workerFlagsOf } from '../src/cli/commands/worker.ts';
import { makeHome, troupe } from './cli-run.ts';

const NO_REDIS = "troupe: worker needs the servers' Redis: pass --redis URL, set TROUPE_REDIS_URL, or set distributed.redis in config.yaml (see `troupe help worker`)\n";
const BAD_URL = 'http://admin:hunter2@cache:6379';

test('worker without a Redis URL (no --redis, no TROUPE_REDIS_URL, none in config.yaml) names the three ways to give one, exit 2', async (t) => {
  const home = await makeHome();
  t.after(() => home.remove());
  assert.deepEqual(await troupe(['worker', ...home.flag]), { code: 2, stdout: '', stderr: NO_REDIS });
  // An empty variable is no URL either.
  assert.deepEqual(await troupe(['worker', '--labels', 'gpu=true', ...home.flag], { TROUPE_REDIS_URL: '' }), { code: 2, stdout: '', stderr: NO_REDIS });
});

test('worker refuses malformed labels, a bad id or a bad limit, naming the flag as typed (Dagu\'s too), exit 2', async (t) => {
  const home = await makeHome();
  t.after(() => home.remove());
  const usage = (problem: string) => `troupe: ${problem} (see \`troupe help worker\`)\n`;
  const idRule = 'must be 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit';
  const cases: Array<[string[], string]> = [
    [['--labels', 'gpu'], usage('--labels "gpu" is not valid: label "gpu" must be key=value')],
    [['--labels', 'region=eu,gpu'], usage('--labels "region=eu,gpu" is not valid: label "gpu" must be key=value')],
    [['--worker.labels', 'gpu'], usage('--worker.labels "gpu" is not valid: label "gpu" must be key=value')],
    [['-l', 'a=1,a=2'], usage('--labels "a=1,a=2" is not valid: label a is given twice')],
    [['--id', 'host:1'], usage(`--id: worker id "host:1" ${idRule}`)],
    [['--worker.id', `w${'x'.repeat(64)}`], usage(`--worker.id: worker id "w${'x'.repeat(64)}" ${idRule}`)],
    [['-w', '.hidden'], usage(`--id: worker id ".hidden" ${idRule}`)],
    [['--max-active-runs', '0'], usage('--max-active-runs "0" is not valid: give a whole number of runs, 1 or more')],
    [['--max-active-runs', '2.5'], usage('--max-active-runs "2.5" is not valid: give a whole number of runs, 1 or more')],
    [['--worker.max-active-runs', 'many'], usage('--worker.max-active-runs "many" is not valid: give a whole number of runs, 1 or more')],
    [['-m', '-3'], usage('--max-active-runs "-3" is not valid: give a whole number of runs, 1 or more')],
    [['--worker.max-active-runs'], usage('--worker.max-active-runs needs a value')],
    [['--labels', 'a=1', '--worker.labels', 'a=2'], usage("give --labels or --worker.labels (Dagu's name for it), not both")],
    [['--keep-runs', '-1'], usage('--keep-runs "-1" is not valid: give a whole number of runs, 0 or more')],
    [['--keep-runs', 'all'], usage('--keep-runs "all" is not valid: give a whole number of runs, 0 or more')],
  ];
  for (const [args, stderr] of cases) {
    // A Redis URL is given: each is refused for its own flag, before the URL is used.
    assert.deepEqual(await troupe(['worker', ...home.flag, ...args], { TROUPE_REDIS_URL: 'redis://127.0.0.1:9' }), { code: 2, stdout: '', stderr }, args.join(' '));
  }
});

test('Dagu\'s --worker.labels, --worker.max-active-runs and --worker.id read as --labels, --max-active-runs and --id', async (t) => {
  const home = await makeHome();
  t.after(() => home.remove());
  // Good flags get as far as the Redis URL, whose problem is the one told (exit 1), by either spelling.
  const badUrl = /^troupe: the Redis URL must start with redis:\/\/ or rediss:\/\/, not http:\/\/ \(distributed\.redis, TROUPE_REDIS_URL or --redis\)\n$/;
  for (const args of [
    ['--labels', 'gpu=true,region=eu', '--max-active-runs', '4', '--id', 'w-1'],
    ['--worker.labels', 'gpu=true,region=eu', '--worker.max-active-runs', '4', '--worker.id', 'w-1'],
    ['-l', 'gpu=true,region=eu', '-m', '4', '-w', 'w-1'],
  ]) {
    const outcome = await troupe(['worker', ...args, '--redis', BAD_URL, ...home.flag]);
    assert.equal(outcome.code, 1, args.join(' '));
    assert.match(outcome.stderr, badUrl, args.join(' '));
  }
  const expected = { labels: { gpu: 'true', region: 'eu' }, maxActiveRuns: 4, id: 'w-1', keepRuns: DEFAULT_KEEP_RUNS };
  assert.deepEqual(workerFlagsOf({ labels: 'gpu=true,region=eu', maxActiveRuns: '4', id: 'w-1' }), expected);
  assert.deepEqual(workerFlagsOf({ 'worker.labels': 'gpu=true,region=eu', 'worker.maxActiveRuns': '4', 'worker.id': 'w-1' }), expected);
  // Both spellings with the same value are one flag given twice, not a conflict.
  assert.deepEqual(workerFlagsOf({ labels: 'gpu=true', 'worker.labels': 'gpu=true' }).labels, { gpu: 'true' });
  // Dagu's defaults: no labels, 100 runs at once; the id is the worker's to choose.
  assert.deepEqual(workerFlagsOf({}), { labels: {}, maxActiveRuns: DEFAULT_MAX_ACTIVE_RUNS, id: undefined, keepRuns: DEFAULT_KEEP_RUNS });
  assert.equal(DEFAULT_MAX_ACTIVE_RUNS, 100);
  // troupe's own: the copies of the newest 1,000 finished runs stay on the worker; 0 keeps none.
  assert.equal(DEFAULT_KEEP_RUNS, 1000);
  assert.equal(workerFlagsOf({ keepRuns: '0' }).keepRuns, 0);
});

test('a Redis URL that cannot be used stops worker, server and scheduler before anything starts, its password never shown', async (t) => {
  const home = await makeHome();
  t.after(() => home.remove());
  const badUrl = /^troupe: the Redis URL must start with redis:\/\/ or rediss:\/\/, not http:\/\/ \(distributed\.redis, TROUPE_REDIS_URL or --redis\)\n$/;
  for (const verb of ['worker', 'server', 'start-all', 'scheduler']) {
    for (const [args, env] of [[['--redis', BAD_URL], {}], [[], { TROUPE_REDIS_URL: BAD_URL }]] as const) {
      const outcome = await troupe([verb, ...args, ...home.flag, ...(verb === 'worker' ? [] : ['--port', '0'])], env);
      assert.equal(outcome.code, 1, `${verb} ${outcome.stderr}`);
      assert.match(outcome.stderr, badUrl, verb);
      assert.doesNotMatch(outcome.stdout + outcome.stderr, /hunter2/, verb);
    }
  }
  // Nothing of the home was opened.
  assert.equal(existsSync(join(home.dir, 'data')), false, readdirSync(home.dir).join());
});

test('config.yaml\'s distributed.redis is read by worker from the home, --config, or TROUPE_CONFIG', async (t) => {
  const home = await makeHome();
  t.after(() => home.remove());
  const { writeFile } = await import('node:fs/promises');
  await writeFile(join(home.dir, 'config.yaml'), `distributed:\n  redis: ${BAD_URL}\n  coordinators: x\n`);
  const fromHome = await troupe(['worker', ...home.flag]);
  assert.equal(fromHome.code, 1);
  assert.match(fromHome.stderr, /the Redis URL must start with redis:\/\/ or rediss:\/\//);
  assert.doesNotMatch(fromHome.stderr, /hunter2/);
  const named = await troupe(['worker', '--config', join(home.dir, 'config.yaml')]);
  assert.match(named.stderr, /the Redis URL must start with redis:\/\//);
  const fromVariable = await troupe(['worker'], { TROUPE_CONFIG: join(home.dir, 'config.yaml') });
  assert.match(fromVariable.stderr, /the Redis URL must start with redis:\/\//);
  // The flag wins over the file: a good file, a bad flag.
  await writeFile(join(home.dir, 'config.yaml'), 'distributed:\n  redis: redis://127.0.0.1:9\n');
  const overridden = await troupe(['worker', '--redis', BAD_URL, ...home.flag]);
  assert.match(overridden.stderr, /not http:\/\//);
});

test('help worker lists the flags, Dagu\'s spellings among them, and says what a signal does', async () => {
  const { code, stdout } = await troupe(['help', 'worker']);
  assert.equal(code, 0);
  for (const flag of ['--redis <url>', '-l, --labels', '--worker.labels', '-m, --max-active-runs', '--worker.max-active-runs', '-w, --id', '--worker.id', '--home', '--config', '--shutdown-grace']) {
    assert.ok(stdout.includes(flag), flag);
  }
  assert.match(stdout, /default 100/);
  assert.match(stdout, /SIGTERM or SIGINT/);
  assert.match((await troupe(['help', 'server'])).stdout, /--redis <url>/);
});
