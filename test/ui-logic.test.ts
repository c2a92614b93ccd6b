// The dashboard's pure logic (ui/): ANSI colours in step logs, the start form's params, and
// the lines that definition problems name. The pages themselves are covered by browser tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAnsi } from '../ui/ansi.ts';
import { paramForm, paramsBody } from '../ui/params.ts';
import { lineRange, problems } from '../ui/spec-problems.ts';

test('SGR colours and bold become segments, reset ends them, and no escape character is left', () => {
  const { segments, end } = parseAnsi('\x1b[32mgreen\x1b[0m plain \x1b[1;91mbold bright red\x1b[39m still bold\x1b[0m');
  assert.deepEqual(segments, [
    { text: 'green', fg: 32, bold: false },
    { text: ' plain ', fg: null, bold: false },
    { text: 'bold bright red', fg: 91, bold: true },
    { text: ' still bold', fg: null, bold: true },
  ]);
  assert.deepEqual(end, { fg: null, bold: false });
});

test('other escape sequences and control characters are dropped, never shown', () => {
  const { segments } = parseAnsi('\x1b[2K\x1b[1Gprogress\x1b]0;window title\x07 done\x07\x08 \x1b[38;5;196mX\x1b[');
  const text = segments.map((s) => s.text).join('');
  assert.equal(text, 'progress done X');
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(text));
  // A 256-colour code is skipped with its arguments: it does not read as code 5 or 196.
  assert.equal(segments.at(-1)?.fg, null);
});

test('a colour left open carries over to the next line', () => {
  const first = parseAnsi('\x1b[33mstarts yellow');
  const second = parseAnsi('goes on\x1b[mthen plain', first.end);
  assert.deepEqual(second.segments, [{ text: 'goes on', fg: 33, bold: false }, { text: 'then plain', fg: null, bold: false }]);
});

test('markup in a log line stays text', () => {
  const { segments } = parseAnsi('<img src=x onerror=alert(1)>');
  assert.deepEqual(segments, [{ text: '<img src=x onerror=alert(1)>', fg: null, bold: false }]);
});

test('named and positional params become fields with their defaults, sent as a JSON object', () => {
  const named = paramForm({ params: ['NAME=world', 'COUNT=3'], defaultParams: '{"NAME":"world","COUNT":"3"}' });
  assert.deepEqual(named, { kind: 'fields', fields: [{ name: 'NAME', value: 'world' }, { name: 'COUNT', value: '3' }] });
  assert.equal(paramsBody(named), '{"NAME":"world","COUNT":"3"}');
  const positional = paramForm({ params: ['first', 'second'], defaultParams: '{"1":"first","2":"second"}' });
  assert.equal(positional.kind, 'fields');
  assert.equal(paramForm({ params: [], defaultParams: '' }).kind, 'none');
  assert.deepEqual(paramForm({ params: ['A=1'], defaultParams: 'A=1' }), { kind: 'text', text: 'A=1' });
  assert.equal(paramsBody({ kind: 'text', text: '  ' }), undefined);
});

test('a problem that names a line points at it', () => {
  assert.deepEqual(problems(['steps[0].depends (line 3): unknown step "x"', 'spec is required']), [
    { text: 'steps[0].depends (line 3): unknown step "x"', line: 3 },
    { text: 'spec is required', line: null },
  ]);
  assert.deepEqual(lineRange('a\nbb\nccc', 2), [2, 4]);
  assert.deepEqual(lineRange('a\nbb\nccc', 3), [5, 8]);
  assert.deepEqual(lineRange('a', 5), [1, 1]);
});

test('the System page reads its key figures from the metrics text: labels, escapes, and only the metrics asked for', async () => {
  const { parseMetrics } = await import('../ui/metrics-text.ts');
  const text = [
    '# HELP troupe_dags_total DAG definition files',
    '# TYPE troupe_dags_total gauge',
    'troupe_dags_total 12',
    'troupe_dag_runs_total{status="succeeded"} 40',
    'troupe_dag_runs_total{status="fail\\"ed"} 2',
    'troupe_process_cpu_seconds_total 1.5',
    '',
  ].join('\n');
  assert.deepEqual(parseMetrics(text, new Set(['troupe_dags_total', 'troupe_dag_runs_total'])), [
    { name: 'troupe_dags_total', labels: {}, value: 12 },
    { name: 'troupe_dag_runs_total', labels: { status: 'succeeded' }, value: 40 },
    { name: 'troupe_dag_runs_total', labels: { status: 'fail"ed' }, value: 2 },
  ]);
});
