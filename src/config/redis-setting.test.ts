// The Redis of distributed dispatch (`redisUrl`): config.yaml's distributed.redis < TROUPE_REDIS_URL
// < --redis, checked, and never shown with its password.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, maskedRedisUrl } from '../core/index.ts';
import { resolveConfig } from './resolve.ts';
import { completeSettings } from './settings.ts';

async function withHome(t: { after(fn: () => Promise<void>): void }, yaml?: string): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'troupe-redis-config-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  if (yaml !== undefined) await writeFile(join(home, 'config.yaml'), yaml);
  return home;
}

test('unset by default: no config, no variable, no flag (an empty variable counts as unset)', async (t) => {
  const home = await withHome(t);
  assert.equal((await resolveConfig({ home }, {})).redisUrl, undefined);
  assert.equal((await resolveConfig({ home }, { TROUPE_REDIS_URL: '' })).redisUrl, undefined);
  assert.equal(completeSettings({}).redisUrl, undefined);
});

test('from each source: config.yaml distributed.redis, TROUPE_REDIS_URL, --redis; as given, credentials kept', async (t) => {
  const home = await withHome(t, 'distributed:\n  redis: redis://:filepass@file-host:6379/2\n');
  assert.equal((await resolveConfig({ home }, {})).redisUrl, 'redis://:filepass@file-host:6379/2');
  const bare = await withHome(t);
  assert.equal((await resolveConfig({ home: bare }, { TROUPE_REDIS_URL: 'rediss://env-host' })).redisUrl, 'rediss://env-host');
  assert.equal((await resolveConfig({ home: bare, redis: 'redis://flag-host:7000' }, {})).redisUrl, 'redis://flag-host:7000');
});

test('the variable wins over config.yaml, the flag over both', async (t) => {
  const home = await withHome(t, 'distributed:\n  redis: redis://file-host\n');
  assert.equal((await resolveConfig({ home }, { TROUPE_REDIS_URL: 'redis://env-host' })).redisUrl, 'redis://env-host');
  assert.equal((await resolveConfig({ home, redis: 'redis://flag-host' }, { TROUPE_REDIS_URL: 'redis://env-host' })).redisUrl, 'redis://flag-host');
});

test('config.yaml: other keys under distributed are named among the unused keys; an empty redis is unset; a non-map is refused', async (t) => {
  const home = await withHome(t, 'distributed:\n  redis: redis://file-host\n  coordinator: x:50055\n');
  const config = await resolveConfig({ home }, {});
  assert.equal(config.redisUrl, 'redis://file-host');
  assert.match(config.warnings.join(), /ignoring keys troupe does not use: distributed\.coordinator$/);
  const empty = await withHome(t, 'distributed:\n  redis:\n');
  assert.equal((await resolveConfig({ home: empty }, {})).redisUrl, undefined);
  const scalar = await withHome(t, 'distributed: redis://file-host\n');
  await assert.rejects(resolveConfig({ home: scalar }, {}), /config file .*config\.yaml: distributed must be a map with redis$/);
  const number = await withHome(t, 'distributed:\n  redis: 6379\n');
  await assert.rejects(resolveConfig({ home: number }, {}), /distributed\.redis must be a redis:\/\/ or rediss:\/\/ URL$/);
});

test('a URL that is no redis:// or rediss:// URL is refused, naming where it is set, never quoting its password', async (t) => {
  const home = await withHome(t);
  const cases: [string, RegExp][] = [
    ['http://admin:hunter2@cache:6379', /^the Redis URL must start with redis:\/\/ or rediss:\/\/, not http:\/\/ \(distributed\.redis, TROUPE_REDIS_URL or --redis\)$/],
    ['hunter2', /^the Redis URL must be redis:\/\/\[user:password@\]host\[:port\]\[\/db\] or rediss:\/\/\.\.\. for TLS \(distributed\.redis/],
    ['redis://:hunter2@', /^the Redis URL (names no host|must be)/],
  ];
  for (const [url, message] of cases) {
    for (const attempt of [() => resolveConfig({ home, redis: url }, {}), () => resolveConfig({ home }, { TROUPE_REDIS_URL: url })]) {
      await assert.rejects(attempt(), (error: unknown) => {
        assert.ok(error instanceof AppError && error.code === 'bad_request', String(error));
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      });
    }
  }
  assert.throws(() => completeSettings({ redisUrl: 42 as never }), /^AppError: the Redis URL \(distributed\.redis, TROUPE_REDIS_URL or --redis\) must be a redis:\/\/ or rediss:\/\/ URL$|must be a redis:\/\/ or rediss:\/\/ URL$/);
});

test('shown masked: user and password become ***', () => {
  assert.equal(maskedRedisUrl('redis://admin:hunter2@cache:6379/0'), 'redis://***@cache:6379/0');
  assert.equal(maskedRedisUrl('rediss://:hunter2@cache'), 'rediss://***@cache');
  assert.equal(maskedRedisUrl('redis://cache:6379'), 'redis://cache:6379');
});
