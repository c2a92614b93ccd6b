// A NUL byte anywhere in a definition (a dotenv file, a secret's file, workingDir, logDir, a step's
// dir or output files, a command) is a definition error naming the field, never a 500 at start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.ts';

const CASES: Array<[string, string]> = [
  ['dotenv', 'dotenv: "/tmp/x\\0.env"\nsteps:\n  - echo hi\n'],
  ['dotenv[1]', 'dotenv:\n  - .env\n  - "b\\x00"\nsteps:\n  - echo hi\n'],
  ['secrets[0].key', 'secrets:\n  - name: S\n    provider: file\n    key: "secret\\0.txt"\nsteps:\n  - echo hi\n'],
  ['workingDir', 'workingDir: "/tmp/w\\0rk"\nsteps:\n  - echo hi\n'],
  ['logDir', 'logDir: "logs\\u0000"\nsteps:\n  - echo hi\n'],
  ['steps[0].dir', 'steps:\n  - command: echo hi\n    dir: "/tmp\\0"\n'],
  ['steps[0].stdout', 'steps:\n  - command: echo hi\n    stdout: "/tmp/out\\0"\n'],
  ['steps[0].command', 'steps:\n  - command: "echo \\0"\n'],
  ['env[0].A', 'env:\n  - A: "x\\0y"\nsteps:\n  - echo hi\n'],
];

test('a NUL byte in a definition is refused with its field at validate, create, start and inline runs', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  for (const [field, spec] of CASES) {
    const message = new RegExp(`${field.replace(/[[\].]/g, '\\$&')} \\(line \\d+\\): must not contain a NUL byte`);
    const validated = await server.call('POST', '/dags/validate', { spec });
    assert.equal(validated.status, 200, `${field}: ${validated.text}`);
    assert.equal(validated.body.valid, false, field);
    assert.ok(validated.body.errors.some((error: string) => message.test(error)), `${field}: ${validated.text}`);
    const created = await server.call('POST', '/dags', { name: 'nul', spec });
    assert.equal(created.status, 400, `${field}: ${created.text}`);
    assert.match(created.body.message, message);
    const inline = await server.call('POST', '/dag-runs', { name: 'nulinline', spec });
    assert.equal(inline.status, 400, `${field}: ${inline.text}`);
    assert.match(inline.body.message, message);
    // Written by hand: the start refuses it the same way.
    await server.writeDag('nulfile', spec);
    const started = await server.call('POST', '/dags/nulfile/start', {});
    assert.equal(started.status, 400, `${field}: ${started.text}`);
    assert.match(started.body.message, message);
  }
  assert.equal((await server.call('GET', '/health')).status, 200);
});
