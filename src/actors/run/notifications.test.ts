import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus, type NodeRecord, type RunRecord } from '../../core/index.ts';
import { runMail, stepErrorMail } from './notifications.ts';
import type { RunMailPlan, RunPlan } from './plan.ts';

const node = (name: string, status: NodeStatus, fields: Partial<NodeRecord> = {}): NodeRecord => ({
  step: { name, command: 'echo', args: ['<hi>'], executorConfig: { config: {} } }, stdout: `/logs/${name}.out`, stderr: `/logs/${name}.err`,
  startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:01Z', status, retryCount: 0, doneCount: 1, error: '',
  subRuns: [], subRunsRepeated: [], ...fields,
});
const record = (status: RunStatus, nodes: NodeRecord[]): RunRecord => ({
  name: 'nightly', dagRunId: 'r-1', attemptId: 'a', rootDAGRunName: 'nightly', rootDAGRunId: 'r-1', parentDAGRunName: '', parentDAGRunId: '',
  status, queuedAt: '', startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:02Z', log: '/logs/run.log', params: '{}', nodes, createdAtMs: 0,
});
const plan = (mail: RunMailPlan): RunPlan => ({ mail } as unknown as RunPlan);
const mail: RunMailPlan = {
  mailOn: { failure: true, success: true },
  errorMail: { from: 'troupe@example.com', to: ['oncall@example.com'], prefix: '[ERR]', attachLogs: true },
  infoMail: { to: ['team@example.com'], attachLogs: false },
};

test('the run\'s end mails errorMail when it failed, infoMail when it succeeded or partially, nothing when aborted or not asked', () => {
  const failed = runMail(plan(mail), record(RunStatus.Failed, [node('a', NodeStatus.Failed, { error: 'exit status 1' })]));
  assert.equal(failed?.subject, '[ERR] nightly (failed)');
  assert.deepEqual([failed?.to, failed?.from, failed?.contentType], [['oncall@example.com'], 'troupe@example.com', 'text/html']);
  assert.deepEqual(failed?.attachments, ['/logs/run.log', '/logs/a.out', '/logs/a.err']);
  assert.equal(runMail(plan(mail), record(RunStatus.Succeeded, []))?.subject, 'nightly (succeeded)');
  assert.equal(runMail(plan(mail), record(RunStatus.PartiallySucceeded, []))?.subject, 'nightly (partially_succeeded)');
  assert.equal(runMail(plan(mail), record(RunStatus.Succeeded, []))?.attachments, undefined);
  assert.equal(runMail(plan(mail), record(RunStatus.Aborted, [])), undefined);
  assert.equal(runMail(plan({ ...mail, mailOn: { failure: false, success: true } }), record(RunStatus.Failed, [])), undefined);
  assert.equal(runMail(plan({ ...mail, infoMail: undefined }), record(RunStatus.Succeeded, [])), undefined);
});

test('a failed step\'s mail goes through errorMail with the run\'s status at that time; none without errorMail', () => {
  const running = record(RunStatus.Running, [node('a', NodeStatus.Failed, { error: 'exit status 4' }), node('b', NodeStatus.NotStarted, { startedAt: '', finishedAt: '' })]);
  assert.equal(stepErrorMail(plan(mail), running, 0)?.subject, '[ERR] nightly (running)');
  assert.equal(stepErrorMail(plan({ ...mail, errorMail: undefined }), running, 0), undefined);
});

test('the body is an HTML report of the run and its steps, every value escaped', () => {
  const body = runMail(plan(mail), record(RunStatus.Failed, [node('a&b', NodeStatus.Failed, { error: '<boom>' })]))!.message;
  assert.match(body, /^<!DOCTYPE html>/);
  for (const text of ['nightly', 'r-1', 'FAILED', '(none)', '<td>a&amp;b</td>', 'echo &lt;hi&gt;', '&lt;boom&gt;']) assert.ok(body.includes(text), text);
  assert.ok(!body.includes('<boom>'));
});
