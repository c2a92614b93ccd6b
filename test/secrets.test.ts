// A secret never leaves the process unmasked: not in the home (LMDB files, logs, scripts), not in a
// response of any read route, not on the command line of a process (what `ps` shows). The steps
// still get its real value, through their environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from './helpers.ts';

// Never written in a definition: the steps rebuild it from two halves to compare.
const SECRET = 'tr0upe-S3CRET-4f9a2c71';
const SECRET_ENV = 'SECRETS_TEST_API_TOKEN';
const REBUILT = '$(printf %s tr0upe-S3CRET- 4f9a2c71)';

const MAIN = [
  'type: graph',
  'maxActiveSteps: 8',
  'secrets:',
  '  - name: API_TOKEN',
  '    provider: env',
  `    key: ${SECRET_ENV}`,
  'steps:',
  '  - name: command',
  // The step lasts long enough for /proc to be sampled while it runs.
  `    command: '[ "\${API_TOKEN}" = "${REBUILT}" ] && echo COMMAND_OK; sleep 0.6; echo done \${API_TOKEN}'`,
  '  - name: script',
  '    script: |',
  `      if [ "\${API_TOKEN}" = "${REBUILT}" ]; then echo SCRIPT_OK; fi`,
  // Not directly next to a single quote, which would leave it as written (as Dagu does).
  `      echo 'quoted: \${API_TOKEN} end' "slice: \${API_TOKEN:0:6}"`,
  '      sleep 0.6',
  '  - name: guarded',
  '    preconditions:',
  '      - condition: "${API_TOKEN}"',
  '        expected: "not-the-token"',
  '    command: echo never',
  '  - name: guarded-command',
  '    preconditions:',
  '      - command: sleep 0.3; test "${API_TOKEN}" = not-the-token',
  '    command: echo never',
  '  - name: capture',
  '    command: echo "token=${API_TOKEN}"',
  '    output: CAPTURED',
  '  - name: fails',
  '    env:',
  '      - PROBE: "`test ${API_TOKEN} = x && echo y`"',
  '    command: echo never',
  '  - name: call',
  '    call: child',
  '    params: "TOKEN=${API_TOKEN}"',
  '    output: CHILD_RESULT',
  '---',
  'name: child',
  'params:',
  '  - TOKEN: ""',
  'steps:',
  '  - name: check',
  // Run as the step starts, with the child's params: the command lasts long enough to be sampled.
  '    env:',
  '      - TOKEN_LENGTH: "`sleep 0.3; printf %s ${TOKEN} | wc -c`"',
  `    command: '[ "\${TOKEN}" = "${REBUILT}" ] && echo CHILD_OK \${TOKEN_LENGTH}; echo child \${TOKEN}'`,
  '    output: CHILD_ECHO',
].join('\n');

const DAG_PRECONDITION = [
  'secrets:',
  '  - name: API_TOKEN',
  '    provider: env',
  `    key: ${SECRET_ENV}`,
  'preconditions:',
  '  - condition: "${API_TOKEN}"',
  '    expected: "not-the-token"',
  'steps:',
  '  - command: echo never',
].join('\n');

/** Every file under `dir`, read as bytes, that holds `needle`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await readFile(path)).includes(needle)) found.push(path);
  }
  return found;
}

/** Files under `dir` whose name ends with `suffix`. */
async function filesEnding(dir: string, suffix: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith(suffix)).map((entry) => join(entry.parentPath, entry.name));
}

/**
 * A process of its own that samples, every 15 ms and apart from the server's event
 * loop, the command lines of all processes (those holding the secret or `marker`, with their
 * parent's) and the script files in the home (mode, whether they hold the secret). It reads the
 * secret and its settings from its environment: its own command line names neither.
 */
const SAMPLER = `
const fs = require('node:fs');
const { join } = require('node:path');
const { SECRETS_TEST_API_TOKEN: secret, SAMPLER_MARKER: marker, SAMPLER_HOME: home } = process.env;
const read = (path) => { try { return fs.readFileSync(path, 'utf8'); } catch { return ''; } };
const commandLine = (pid) => read('/proc/' + pid + '/cmdline').replaceAll('\\0', ' ');
const reported = new Set();
const report = (fact) => {
  const text = JSON.stringify(fact);
  if (!reported.has(text)) { reported.add(text); process.stdout.write(text + '\\n'); }
};
const tick = () => {
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid) || pid === String(process.pid)) continue;
    const line = commandLine(pid);
    if (!line.includes(marker) && !line.includes(secret)) continue;
    const stat = read('/proc/' + pid + '/stat');
    report({ kind: 'process', line, parent: commandLine(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) });
  }
  let names = [];
  try { names = fs.readdirSync(home, { recursive: true }).filter((name) => name.endsWith('.script')); } catch {}
  for (const name of names) {
    try {
      const mode = fs.statSync(join(home, name)).mode & 0o777;
      report({ kind: 'script', mode, holdsSecret: fs.readFileSync(join(home, name), 'utf8').includes(secret) });
    } catch {}
  }
  setTimeout(tick, 15);
};
report({ kind: 'ready' });
tick();
`;

interface Sampled {
  processes: Array<{ line: string; parent: string }>;
  scripts: Array<{ mode: number; holdsSecret: boolean }>;
}

/** Starts the sampler; `stop` ends it and gives what it saw. */
async function startSampler(home: string): Promise<{ stop(): Promise<Sampled> }> {
  const child = spawn(process.execPath, ['-e', SAMPLER], { env: { ...process.env, SAMPLER_MARKER: 'COMMAND_OK', SAMPLER_HOME: home }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const ready = new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.includes('"ready"')) resolve();
  }));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await ready;
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      const facts = output.trim().split('\n').map((line) => JSON.parse(line));
      return {
        processes: facts.filter((fact) => fact.kind === 'process'),
        scripts: facts.filter((fact) => fact.kind === 'script'),
      };
    },
  };
}

/** The text of every read route for a run, its steps and its sub DAG runs. */
async function readRoutes(server: TestServer, name: string, dagRunId: string): Promise<Array<[string, string]>> {
  const paths = [
    '/dag-runs', `/dag-runs/${name}`, `/dag-runs/${name}/${dagRunId}`, `/dag-runs/${name}/latest`, `/dag-runs/${name}/${dagRunId}/spec`,
    `/dag-runs/${name}/${dagRunId}/outputs`, `/dag-runs/${name}/${dagRunId}/log`, `/dag-runs/${name}/${dagRunId}/sub-dag-runs`,
    '/dags', `/dags/${name}`, `/dags/${name}/spec`, `/dags/${name}/dag-runs`, `/dags/${name}/dag-runs/${dagRunId}`,
    `/dags/${name}/dag-runs/latest`, '/dags/search?q=API_TOKEN',
  ];
  const run = (await server.call('GET', `/dag-runs/${name}/${dagRunId}`)).body.dagRun;
  for (const node of run.nodes) {
    for (const stream of ['stdout', 'stderr']) paths.push(`/dag-runs/${name}/${dagRunId}/steps/${node.step.name}/log?stream=${stream}`);
    for (const sub of node.subRuns ?? []) {
      const base = `/dag-runs/${name}/${dagRunId}/sub-dag-runs/${sub.dagRunId}`;
      paths.push(base, `${base}/log`);
      const child = (await server.call('GET', base)).body.dagRunDetails;
      for (const childNode of child.nodes) paths.push(`${base}/steps/${childNode.step.name}/log`);
      paths.push(`/dag-runs/${child.name}/${child.dagRunId}`, `/dag-runs/${child.name}/${child.dagRunId}/outputs`, `/dag-runs/${child.name}/${child.dagRunId}/log`);
    }
  }
  const texts: Array<[string, string]> = [];
  for (const path of paths) {
    const response = await server.call('GET', path);
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    texts.push([path, response.text]);
  }
  return texts;
}

for (const spawnMode of ['posix_spawn', 'child_process'] as const) test(`a secret reaches its steps and never a file of the home, a response or a command line (${spawnMode})`, async (t) => {
  process.env[SECRET_ENV] = SECRET;
  const server = await startTestServer('uws', spawnMode === 'child_process' ? { spawnMode } : {});
  t.after(async () => {
    delete process.env[SECRET_ENV];
    await server.close();
  });
  await server.writeDag('secretflow', MAIN);
  await server.writeDag('secretgate', DAG_PRECONDITION);

  const sampler = await startSampler(server.home);
  const started = await server.call('POST', '/dags/secretflow/start', {});
  assert.equal(started.status, 200, started.text);
  const { dagRunId } = started.body;
  const run = await server.waitForRun('secretflow', dagRunId);
  const seen = await sampler.stop();
  const gate = await server.call('POST', '/dags/secretgate/start', {});
  assert.equal(gate.status, 200, gate.text);
  const gateRun = await server.waitForRun('secretgate', gate.body.dagRunId);

  // The steps got the real value.
  const stdout = async (path: string) => (await server.call('GET', `${path}/log`)).body.content as string;
  assert.match(await stdout(`/dag-runs/secretflow/${dagRunId}/steps/command`), /COMMAND_OK\ndone \*{7}/);
  const script = await stdout(`/dag-runs/secretflow/${dagRunId}/steps/script`);
  assert.match(script, /SCRIPT_OK\nquoted: \*{7} end slice: tr0upe/, 'references inside single quotes and slices still expand');
  const node = (stepName: string) => run.nodes.find((candidate: any) => candidate.step.name === stepName);
  const call = node('call');
  assert.equal(call.subRuns.length, 1);
  assert.equal(call.subRuns[0].params, 'TOKEN=*******');
  const child = (await server.call('GET', `/dag-runs/secretflow/${dagRunId}/sub-dag-runs/${call.subRuns[0].dagRunId}`)).body.dagRunDetails;
  assert.match(await stdout(`/dag-runs/secretflow/${dagRunId}/sub-dag-runs/${child.dagRunId}/steps/check`), new RegExp(`CHILD_OK ${SECRET.length}\nchild \\*{7}`));
  assert.equal(child.statusLabel, 'succeeded');

  // What they did is recorded masked.
  assert.equal(node('command').statusLabel, 'succeeded');
  assert.equal(node('script').statusLabel, 'succeeded');
  assert.equal(node('guarded').statusLabel, 'skipped');
  assert.match(node('guarded').error, /is "\*{7}", expected "not-the-token"/);
  assert.equal(node('guarded-command').statusLabel, 'skipped');
  assert.match(node('guarded-command').error, /precondition not met/);
  assert.equal(node('fails').statusLabel, 'failed');
  assert.match(node('fails').error, /test \$\{API_TOKEN\} = x/, 'the failing command is named as written');
  assert.equal(node('capture').statusLabel, 'succeeded');
  const outputs = (await server.call('GET', `/dag-runs/secretflow/${dagRunId}/outputs`)).body;
  assert.equal(outputs.outputs.captured, 'token=*******');
  assert.equal(gateRun.statusLabel, 'aborted');
  const gateLog = (await server.call('GET', `/dag-runs/secretgate/${gate.body.dagRunId}/log`)).body.content;
  assert.match(gateLog, /Precondition not met.*is \\?"\*{7}\\?", expected/);

  // Scripts were private while they ran and are gone after.
  assert.ok(seen.scripts.length > 0, 'the script step was sampled while it ran');
  assert.deepEqual(seen.scripts, [{ kind: 'script', mode: 0o700, holdsSecret: false }]);
  assert.deepEqual(await filesEnding(server.home, '.script'), []);

  // No process showed it on its command line, though the step was seen running.
  // The step's shell, not its forks (a command substitution runs in a copy of it).
  const stepProcesses = seen.processes.filter(({ line, parent }) => line.includes('COMMAND_OK') && !parent.includes('COMMAND_OK'));
  assert.ok(stepProcesses.length > 0, 'the command step was sampled while it ran');
  // Started by the step host in child_process mode, by the server itself with posix_spawn.
  if (server.troupe.spawnMethod === 'child_process') assert.ok(stepProcesses.every(({ parent }) => parent === '' || parent.includes('step-host')));
  else assert.ok(stepProcesses.every(({ parent }) => !parent.includes('step-host')));
  assert.equal(server.troupe.spawnMethod, spawnMode === 'child_process' ? 'child_process' : process.env.TROUPE_SPAWN ?? 'posix_spawn');
  assert.deepEqual(seen.processes.filter(({ line, parent }) => line.includes(SECRET) || parent.includes(SECRET)), []);

  // No response of a read route holds it.
  const responses = [
    ...await readRoutes(server, 'secretflow', dagRunId),
    ...await readRoutes(server, 'secretgate', gate.body.dagRunId),
  ];
  assert.deepEqual(responses.filter(([, text]) => text.includes(SECRET)).map(([path]) => path), []);

  // Nor any file of the home, the LMDB files included.
  await server.troupe.engine.whenFinished('secretflow', dagRunId);
  assert.deepEqual(await filesHolding(server.home, SECRET), []);
});
