// The troupe command's help and usage errors: help with no arguments and for each verb, one-line
// errors that name the problem and the fix (never a stack trace or the parser's own words), exit
// code 2 for a wrong command line; completion scripts; the built command under plain node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { makeHome, troupe, PASSES } from './cli-run.ts';

const VERBS = ['server', 'start-all', 'scheduler', 'worker', 'start', 'enqueue', 'dequeue', 'dry', 'status', 'stop', 'retry', 'restart', 'logs', 'validate', 'exec', 'cleanup', 'completion', 'version'];

test('troupe with no arguments prints help (and starts nothing); help lists every verb and the three first commands', async () => {
  const { code, stdout, stderr } = await troupe([]);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  assert.match(stdout, /^Usage: troupe <verb>/);
  for (const verb of VERBS) assert.match(stdout, new RegExp(`\\n  ${verb} `), `help lists ${verb}`);
  assert.match(stdout, /troupe server[\s\S]*troupe start example[\s\S]*troupe status example/);
});

test('help piped into a reader that has gone (`troupe | head`) ends quietly: no stack trace, exit 0', async () => {
  const { troupeChild } = await import('./cli-run.ts');
  const { child, outcome } = troupeChild([]);
  // The reader is gone before the command writes its help: the write fails with EPIPE.
  child.stdout!.destroy();
  const { code, stderr } = await outcome;
  assert.equal(stderr, '');
  assert.equal(code, 0);
});

test('help <verb> and <verb> --help print the verb\'s arguments and flags, exit 0', async () => {
  for (const verb of VERBS) {
    const [viaHelp, viaFlag] = await Promise.all([troupe(['help', verb]), troupe([verb, '--help'])]);
    assert.equal(viaHelp.code, 0, verb);
    assert.equal(viaFlag.code, 0, verb);
    assert.match(viaHelp.stdout, new RegExp(`^Usage: troupe ${verb} `), verb);
    assert.equal(viaFlag.stdout, viaHelp.stdout, verb);
  }
  const start = await troupe(['help', 'start']);
  for (const flag of ['-p, --params', '-r, --run-id', '-N, --name', '--dags', '--home', '--config', '--server', '--token', '--json']) assert.ok(start.stdout.includes(flag), flag);
  assert.match((await troupe(['help', 'enqueue'])).stdout, /-u, --queue/);
  assert.match((await troupe(['help', 'cleanup'])).stdout, /--retention-days[\s\S]*--dry-run[\s\S]*-y, --yes/);
  assert.match((await troupe(['help', 'retry'])).stdout, /--step <name>/);
  const helpOfHelp = await troupe(['help', 'help']);
  assert.equal(helpOfHelp.code, 0);
  assert.match(helpOfHelp.stdout, /^Usage: troupe <verb>/);
});

test('a wrong command line is one line on stderr naming the problem and where help is, exit code 2', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['strat'], /^troupe: there is no verb "strat"; did you mean start\? \(see `troupe help`\)\n$/],
    [['help', 'frobnicate'], /^troupe: there is no verb "frobnicate" \(see `troupe help`\)\n$/],
    [['help', 'strat', '--json'], /^troupe: there is no verb "strat"; did you mean start\? \(see `troupe help`\)\n$/],
    [['start'], /^troupe: start needs its <dag> argument \(see `troupe help start`\)\n$/],
    [['start', 'x', '--bogus'], /^troupe: start has no flag --bogus \(see `troupe help start`\)\n$/],
    [['retry', 'x'], /^troupe: retry needs --run-id \(see `troupe help retry`\)\n$/],
    [['status', 'x', '-r'], /^troupe: --run-id needs a value \(see `troupe help status`\)\n$/],
    [['status', 'a', 'b'], /^troupe: status was given too many arguments \(see `troupe help status`\)\n$/],
    [['cleanup', 'x', '--retention-days', 'soon'], /^troupe: --retention-days "soon" is not valid: give a whole number of days, 0 or more \(see `troupe help cleanup`\)\n$/],
    [['completion', 'fish'], /^troupe: no completion for shell "fish": bash and zsh are supported \(see `troupe help completion`\)\n$/],
  ];
  for (const [args, expected] of cases) {
    const { code, stdout, stderr } = await troupe(args);
    assert.equal(code, 2, args.join(' '));
    assert.equal(stdout, '', args.join(' '));
    assert.match(stderr, expected, args.join(' '));
  }
});

test('a failure is one line with its fix and exit code 1, never a stack trace', async (t) => {
  const home = await makeHome({ passes: PASSES });
  t.after(() => home.remove());
  const missing = await troupe(['start', 'nope', ...home.flag]);
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr.split('\n').length, 2, missing.stderr);
  assert.doesNotMatch(missing.stderr, /\n\s+at /);
  assert.match(missing.stderr, /^troupe: .*nope/);
  const noFile = await troupe(['validate', './nowhere.yaml', ...home.flag]);
  assert.equal(noFile.code, 1);
  assert.equal(noFile.stderr, 'troupe: no DAG file ./nowhere.yaml: check the path, or give the name of a DAG in the DAGs folder\n');
  const badServer = await troupe(['status', 'passes', '--server', 'http://127.0.0.1:9/']);
  assert.equal(badServer.code, 1);
  assert.match(badServer.stderr, /^troupe: cannot reach the troupe server at http:\/\/127\.0\.0\.1:9\/api\/v2 .*: start it with `troupe server`, or check --server\n$/);
});

test('version prints the package version; completion prints bash and zsh scripts that know every verb and flag', async () => {
  const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '..', 'package.json'), 'utf8'));
  assert.deepEqual(await troupe(['version']), { code: 0, stdout: `troupe ${version}\n`, stderr: '' });
  assert.equal(JSON.parse((await troupe(['version', '--json'])).stdout).version, version);
  const bash = await troupe(['completion', 'bash']);
  assert.equal(bash.code, 0);
  for (const verb of VERBS) assert.ok(bash.stdout.includes(`    ${verb}) flags="`), verb);
  assert.match(bash.stdout, /start\) flags="[^"]*--run-id/);
  assert.match(bash.stdout, /complete -o filenames -F _troupe troupe/);
  // The script is valid bash, and completes a verb and a DAG name from the home.
  const home = await makeHome({ passes: PASSES });
  try {
    const script = `${bash.stdout}\nCOMP_WORDS=(troupe sta); COMP_CWORD=1; _troupe; echo "\${COMPREPLY[@]}"\nCOMP_WORDS=(troupe start pa); COMP_CWORD=2; _troupe; echo "\${COMPREPLY[@]}"`;
    const completed = spawnSync('bash', ['-c', script], { env: { ...process.env, TROUPE_HOME: home.dir }, encoding: 'utf8' });
    assert.equal(completed.status, 0, completed.stderr);
    assert.deepEqual(completed.stdout.split('\n').slice(0, 2), ['start-all start status', 'passes']);
  } finally {
    await home.remove();
  }
  const zsh = await troupe(['completion', 'zsh']);
  assert.equal(zsh.code, 0);
  assert.match(zsh.stdout, /^#compdef troupe\n/);
  for (const verb of VERBS) assert.ok(zsh.stdout.includes(`    '${verb}:`), verb);
});

test('completion finds DAG names in the folder that --dags or --home on the line names, and completes their values as folders', async (t) => {
  const elsewhere = await makeHome({ passes: PASSES });
  const other = await makeHome({ 'other-dag': PASSES });
  t.after(() => Promise.all([elsewhere.remove(), other.remove()]));
  const dagsDir = resolve(other.dir, 'dags');
  const home = other.dir;

  const bash = (await troupe(['completion', 'bash'])).stdout;
  const asked = (words: string[]) => `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _troupe; echo "\${COMPREPLY[*]}"`;
  const lines = [
    asked(['troupe', 'start', 'o']), // TROUPE_HOME: the other home is not it
    asked(['troupe', 'start', '--dags', dagsDir, 'o']),
    asked(['troupe', 'status', '--dags', '=', dagsDir, '--json', '']), // bash's words for --dags=DIR
    asked(['troupe', 'start', '--home', home, 'o']),
    asked(['troupe', 'start', '--home', '~/dags/..', 'o']), // ~ is the HOME below
    asked(['troupe', 'start', '--dags', `${dagsDir.slice(0, -2)}`]), // a folder, not a DAG
  ];
  const completed = spawnSync('bash', ['-c', `${bash}\n${lines.join('\n')}`], { env: { ...process.env, TROUPE_HOME: elsewhere.dir, TROUPE_DAGS: '', HOME: other.dir }, encoding: 'utf8' });
  assert.equal(completed.status, 0, completed.stderr);
  assert.deepEqual(completed.stdout.split('\n').slice(0, 6), ['', 'other-dag', 'other-dag', 'other-dag', 'other-dag', dagsDir]);

  // zsh: the completion system's functions stand in as ones that print what they were given.
  const zsh = (await troupe(['completion', 'zsh'])).stdout;
  const stubs = `compdef() { }; compadd() { echo "compadd $*" }; _files() { echo "_files $*" }; _describe() { echo describe }`;
  const typed = (words: string[]) => `words=(${words.map((word) => `'${word}'`).join(' ')}); CURRENT=${words.length}; _troupe`;
  const script = [stubs, zsh,
    typed(['troupe', 'start', 'o']),
    typed(['troupe', 'start', `--dags=${dagsDir}`, 'o']),
    typed(['troupe', 'start', '--home', '~', 'o']),
    typed(['troupe', 'start', '--home', '']),
    typed(['troupe', 'sta'])].join('\n');
  const found = spawnSync('zsh', ['-f', '-c', script], { env: { ...process.env, TROUPE_HOME: elsewhere.dir, TROUPE_DAGS: '', HOME: other.dir }, encoding: 'utf8' });
  if (found.error && !process.env.CI) return t.skip('zsh is not installed here');
  assert.equal(found.status, 0, found.stderr);
  assert.deepEqual(found.stdout.trim().split('\n').filter((line) => !line.startsWith('_files -g')),
    ['compadd -- passes', 'compadd -- other-dag', 'compadd -- other-dag', '_files -/', 'describe']);
});

test('the package bin is the built command, and it runs under plain node', async (t) => {
  const root = resolve(import.meta.dirname, '..');
  const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
  assert.equal(manifest.bin.troupe, 'dist/cli/main.js');
  const built = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr + built.stdout);
  const home = await makeHome({ passes: PASSES });
  t.after(() => home.remove());
  const bin = resolve(root, manifest.bin.troupe);
  const help = spawnSync(process.execPath, [bin], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^Usage: troupe/);
  const run = spawnSync(process.execPath, [bin, 'start', 'passes', ...home.flag], { encoding: 'utf8', env: { ...process.env, TROUPE_HOME: '' } });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /dag-run passes \S+: succeeded in /);
  const usage = spawnSync(process.execPath, [bin, 'start'], { encoding: 'utf8' });
  assert.equal(usage.status, 2);
  assert.equal(usage.stderr, 'troupe: start needs its <dag> argument (see `troupe help start`)\n');
});
