import { test } from 'node:test';
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AppError, systemClock } from '../core/index.ts';
import { DEFAULTS, completeSettings, type Settings, type SettingsInput } from './settings.ts';
import { SETTING_SOURCES } from './settings-table.ts';

/** The settings whose absence means something of its own (each says what), and so have no default value. */
const LEFT_UNSET = ['logLevel', 'oidc', 'otel', 'redisUrl', 'timeZone', 'tls'];

test('from nothing, every setting with a default has it, the folders under ~/.troupe', () => {
  const settings = completeSettings({});
  const unset = (Object.keys(SETTING_SOURCES) as (keyof Settings)[]).filter((key) => settings[key] === undefined);
  assert.deepEqual(unset.sort(), LEFT_UNSET);
  for (const [key, value] of Object.entries(DEFAULTS)) assert.deepEqual(settings[key as keyof Settings], value, key);
  const home = join(homedir(), '.troupe');
  assert.deepEqual({ home: settings.home, dagsDir: settings.dagsDir, dataDir: settings.dataDir, logDir: settings.logDir },
    { home, dagsDir: join(home, 'dags'), dataDir: join(home, 'data'), logDir: join(home, 'logs') });
  assert.equal(settings.clock, systemClock);
  assert.equal(settings.auth.mode, 'none');
});

test('what is given wins; the folders follow the home unless given; undefined counts as not given', () => {
  const settings = completeSettings({ home: '/srv/t', logDir: '/var/log/t', port: undefined, maxThreads: 4, auth: { token: 'x' } });
  assert.deepEqual([settings.dagsDir, settings.dataDir, settings.logDir], ['/srv/t/dags', '/srv/t/data', '/var/log/t']);
  assert.equal(settings.port, 8080);
  assert.equal(settings.maxThreads, 4);
  assert.deepEqual(settings.auth, { token: 'x', mode: 'none' });
});

test('the lists of a completed object are its own: a change reaches neither the caller nor the defaults', () => {
  const queues = [{ name: 'q', maxConcurrency: 1 }];
  const settings = completeSettings({ queues });
  settings.queues.push({ name: 'r', maxConcurrency: 2 });
  completeSettings({}).corsOrigins.push('https://x.example');
  assert.equal(queues.length, 1);
  assert.deepEqual(completeSettings({}).corsOrigins, []);
});

test('a value that cannot be used is refused, naming the setting', () => {
  const cases: [SettingsInput, RegExp][] = [
    [{ port: 70000 }, /^invalid port "70000"$/],
    [{ port: 1.5 }, /^invalid port "1.5"$/],
    [{ carrier: 'h2' as never }, /^http must be auto, uws or node, not "h2"$/],
    [{ maxThreads: 0 }, /^workers must be a positive integer$/],
    [{ shutdownGraceMs: -1000 }, /^shutdown grace must be a number of seconds, 0 or more, not "-1"$/],
    [{ headersTimeoutMs: 0 }, /^headersTimeoutMs must be a number of milliseconds above 0, not 0$/],
    [{ remoteNodeTimeoutMs: Number.NaN }, /^remoteNodeTimeoutMs must be/],
    [{ logLevel: 'chatty' as never }, /^log level must be one of debug, info, warn, error, silent, not "chatty"$/],
    [{ logFormat: 'pretty' as never }, /^log format must be one of auto, json, text, not "pretty"$/],
    [{ spawnMode: 'fork' as never }, /^spawnMode must be auto or child_process, not "fork"$/],
    [{ eventRetentionMs: 0 }, /^events.retentionHours must be a number of hours above 0, not "0"$/],
    [{ eventHeartbeatMs: -1 }, /^events.heartbeatSec must be a number of seconds above 0/],
    [{ eventMaxCount: -1 }, /^events.maxCount must be an integer, 0 \(no limit\) or more, not "-1"$/],
    [{ eventBacklogBytes: 10 }, /^events.backlogBytes must be an integer of at least 1024, not "10"$/],
    [{ queues: [{ name: 'a', maxConcurrency: 1 }, { name: 'a', maxConcurrency: 2 }] }, /^queues: queue a is configured twice$/],
    [{ queues: [{ name: 'a', maxConcurrency: 0 }] }, /^queues: config\[0\]: maxConcurrency must be an integer of at least 1$/],
    [{ corsOrigins: [''] }, /^cors: allowOrigins must be a list of origins/],
    [{ remoteNodes: [{ name: 'n' }] as never }, /remoteNodes\[0\]/],
    [{ tls: { certFile: 'cert.pem', keyFile: '' } }, /^HTTPS needs both tls.certFile/],
    [{ dataDir: '' }, /^dataDir must be a folder path$/],
    [{ commandOnly: 'yes' as never }, /^commandOnly must be true or false$/],
    [{ cronTimers: {} as never }, /^cronTimers must have setTimeout and clearTimeout$/],
    [{ timeZone: 'Mars/Olympus' }, /^timeZone "Mars\/Olympus" is not a time zone this system knows$/],
    [{ auth: { mode: 'ldap' as never } }, /^auth.mode must be one of none, builtin, oidc, not "ldap"$/],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => completeSettings(input), (error: unknown) => error instanceof AppError && error.code === 'bad_request' && message.test(error.message), JSON.stringify(input));
  }
});

test('a problem quotes the text a value was read from', () => {
  assert.throws(() => completeSettings({ port: Number('ninety') }, { port: 'ninety' }), /invalid port "ninety"$/);
  assert.throws(() => completeSettings({ shutdownGraceMs: Number.NaN }, { shutdownGraceMs: 'soon' }), /not "soon"/);
});

test('the event log and its streams from config.yaml and the variables', async () => {
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { resolveConfig } = await import('./resolve.ts');
  const home = await mkdtemp(join(tmpdir(), 'troupe-events-config-'));
  try {
    await writeFile(join(home, 'config.yaml'), 'events:\n  retentionHours: 2\n  maxCount: 5000\n  heartbeatSec: 30\n  backlogBytes: 65536\n  colour: red\n');
    const fromFile = await resolveConfig({ home }, {});
    assert.deepEqual([fromFile.eventRetentionMs, fromFile.eventMaxCount, fromFile.eventHeartbeatMs, fromFile.eventBacklogBytes], [2 * 3600_000, 5000, 30_000, 65536]);
    assert.match(fromFile.warnings.join(), /events\.colour/);
    const fromEnv = await resolveConfig({ home }, { TROUPE_EVENT_RETENTION_HOURS: '0.5', TROUPE_EVENT_MAX_COUNT: '0' });
    assert.deepEqual([fromEnv.eventRetentionMs, fromEnv.eventMaxCount], [1800_000, 0]);
    await assert.rejects(resolveConfig({ home }, { TROUPE_EVENT_RETENTION_HOURS: 'soon' }), /events.retentionHours must be a number of hours above 0, not "soon"/);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

test('the dashboard is served unless --no-ui, TROUPE_UI=false or ui: false in config.yaml turns it off', async () => {
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { resolveConfig } = await import('./resolve.ts');
  const home = await mkdtemp(join(tmpdir(), 'troupe-ui-config-'));
  try {
    assert.equal((await resolveConfig({ home }, {})).ui, true);
    // Commander hands `ui: true` when --no-ui is not given.
    assert.equal((await resolveConfig({ home, ui: true }, {})).ui, true);
    assert.equal((await resolveConfig({ home, ui: false }, {})).ui, false);
    assert.equal((await resolveConfig({ home }, { TROUPE_UI: 'false' })).ui, false);
    assert.equal((await resolveConfig({ home }, { TROUPE_UI: 'TRUE' })).ui, true);
    await writeFile(join(home, 'config.yaml'), 'ui: false\n');
    assert.equal((await resolveConfig({ home }, {})).ui, false);
    // The variable wins over the file, the flag over both.
    assert.equal((await resolveConfig({ home }, { TROUPE_UI: 'true' })).ui, true);
    await writeFile(join(home, 'config.yaml'), 'ui: true\n');
    assert.equal((await resolveConfig({ home, ui: false }, { TROUPE_UI: 'true' })).ui, false);
    await assert.rejects(resolveConfig({ home }, { TROUPE_UI: 'maybe' }), /^Error: ui must be true or false, not "maybe"$|ui must be true or false, not "maybe"/);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});
