// config.yaml `otel`: the server's default tracing, read with the rules of a DAG's `otel`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfigFile } from './config-file.ts';

async function read(text: string) {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-otel-config-'));
  try {
    await writeFile(join(dir, 'config.yaml'), text);
    return await readConfigFile(join(dir, 'config.yaml'), true);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('otel in config.yaml is read whole', async () => {
  const found = await read('otel:\n  enabled: true\n  endpoint: collector:4317\n  insecure: true\n  timeout: 5s\n  headers:\n    x-key: abc\n  resource:\n    team: ops\n    tier: 2\n');
  assert.deepEqual(found.otel, { enabled: true, endpoint: 'collector:4317', insecure: true, timeout: '5s', headers: { 'x-key': 'abc' }, resource: { team: 'ops', tier: '2' } });
  assert.deepEqual(found.ignored, []);
});

test('an otel that cannot be used stops the server naming the field', async () => {
  const cases: Array<[string, RegExp]> = [
    ['otel: yes\n', /otel must be a map/],
    ['otel:\n  enabled: true\n', /otel needs an endpoint when enabled/],
    ['otel:\n  enabled: maybe\n  endpoint: x\n', /otel\.enabled must be true or false/],
    ['otel:\n  endpoint: x\n  timeout: soon\n', /otel\.timeout must be a duration such as 10s or 1m30s, not "soon"/],
    ['otel:\n  endpoint: x\n  headers: [a]\n', /otel\.headers must be a map of names to strings/],
    ['otel:\n  endpoint: x\n  sampler: always\n', /otel\.sampler is not a field of otel/],
  ];
  for (const [text, problem] of cases) await assert.rejects(read(text), problem, text);
});
