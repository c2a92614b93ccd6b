import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULTS } from './settings.ts';
import { SETTING_SOURCES, settingsTable } from './settings-table.ts';

const docs = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

test('docs/configuration.md holds the table of every setting as the code states it', () => {
  assert.ok(docs.includes(settingsTable()), `docs/configuration.md must hold this table, as it is:\n\n${settingsTable()}\n`);
});

test('every setting with a default value is in the table', () => {
  for (const key of [...Object.keys(DEFAULTS), 'home', 'dagsDir', 'dataDir', 'logDir']) {
    assert.ok(key in SETTING_SOURCES, key);
    assert.match(docs, new RegExp(`^\\| \`${key}\` \\|`, 'm'), key);
  }
});
