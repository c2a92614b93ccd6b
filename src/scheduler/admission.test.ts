import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionError } from './admission.ts';

test('singleton conflicts and maxActiveRuns give the codes of docs/api.md', () => {
  const base = { name: 'd', maxActiveRuns: 1, singleton: false, active: 0, kind: 'start' as const };
  assert.equal(admissionError(base), undefined);
  assert.equal(admissionError({ ...base, active: 1, singleton: true })?.code, 'already_running');
  assert.equal(admissionError({ ...base, active: 1, singleton: true, kind: 'inline' })?.code, 'max_run_reached');
  assert.equal(admissionError({ ...base, active: 1 })?.code, 'max_run_reached');
  assert.equal(admissionError({ ...base, active: 5, maxActiveRuns: -1 }), undefined);
  assert.equal(admissionError({ ...base, active: 1, maxActiveRuns: 2 }), undefined);
});
