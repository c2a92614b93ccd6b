// shellPackages: with `shell: nix-shell` and nix-shell on the PATH, a step runs as
// `nix-shell -p <package>... --pure --run <command>`, as Dagu runs it; without nix-shell, or with
// another shell, the DAG is invalid and refused at its start, saying why.
// nix-shell needs the Nix package set, which this machine cannot download: the nix-shell on the
// PATH here is a stand-in that records the words it was started with and runs the --run command.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from './helpers.ts';

const NIX_DAG = 'shell: nix-shell\nsteps:\n  - name: s\n    command: echo "in nix $GREETING"\n    shellPackages: [python3, jq]\n    env:\n      - GREETING: hi\n';

test('a step with shellPackages runs inside nix-shell with its packages', async (t) => {
  const bin = await mkdtemp(join(tmpdir(), 'troupe-nix-'));
  t.after(() => rm(bin, { recursive: true, force: true }));
  const calls = join(bin, 'calls');
  // Records its words, one per line, then runs what follows --run, as nix-shell would in the packages' environment.
  await writeFile(join(bin, 'nix-shell'), `#!/bin/sh\nprintf '%s\\n' "$@" > ${calls}\nwhile [ "$1" != "--run" ]; do shift; done\nshift\nexec sh -c "$1"\n`);
  await chmod(join(bin, 'nix-shell'), 0o755);
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  t.after(() => { process.env.PATH = path; });
  const server = await startTestServer();
  t.after(() => server.close());
  const valid = await server.call('POST', '/dags/validate', { spec: NIX_DAG });
  assert.deepEqual([valid.body.valid, valid.body.errors], [true, []]);
  await server.writeDag('nix', NIX_DAG);
  const run = await server.startAndWait('nix');
  assert.equal(run.status, 4, JSON.stringify(run));
  assert.equal(await server.stepLog('nix', run.dagRunId, 's'), 'in nix hi');
  // nix-shell --pure clears the environment: the step's variables are in its command's text.
  assert.deepEqual((await readFile(calls, 'utf8')).trim().split('\n'), ['-p', 'python3', '-p', 'jq', '--pure', '--run', 'echo "in nix hi"']);
});

test('without nix-shell, or with another shell, shellPackages make the DAG invalid and its start is refused', async (t) => {
  const path = process.env.PATH;
  process.env.PATH = '/usr/bin:/bin';
  t.after(() => { process.env.PATH = path; });
  const server = await startTestServer();
  t.after(() => server.close());
  const missing = await server.call('POST', '/dags/validate', { spec: NIX_DAG });
  assert.deepEqual([missing.body.valid, missing.body.errors], [false, ['steps.s.shellPackages: nix-shell not found']]);
  const other = await server.call('POST', '/dags/validate', { spec: NIX_DAG.replace('shell: nix-shell', 'shell: bash') });
  assert.deepEqual(other.body.errors, ['steps.s.shellPackages: packages are installed by nix-shell: set shell: nix-shell']);
  await server.writeDag('nix', NIX_DAG);
  const started = await server.call('POST', '/dags/nix/start', {});
  assert.equal(started.status, 400);
  assert.match(started.body.message, /steps\.s\.shellPackages: nix-shell not found/);
});
