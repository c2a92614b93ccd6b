// What the plain progress tells of a retry: a step that starts anew is told again, even when the
// change from running was not seen and it ended as the attempt before did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView, RunView } from './backend/types.ts';
import { Progress } from './progress.ts';

const node = (name: string, statusLabel: string, startedAt: string, finishedAt: string): NodeView =>
  ({ step: { name }, status: 0, statusLabel, startedAt, finishedAt, error: '', stdout: '', stderr: '' });
const run = (statusLabel: string, nodes: NodeView[]): RunView =>
  ({ name: 'breaks', dagRunId: 'b1', status: 0, statusLabel, queuedAt: '', startedAt: '2026-11-29T10:00:00Z', finishedAt: '', log: '', params: '', nodes });

const told = (lines: string[]) => lines.join('').split('\n').filter(Boolean).map((line) => line.replace(/^\S+ /, ''));

test('a retried step that ended before it was seen running is told started and ended; a kept step is not told', () => {
  const lines: string[] = [];
  const progress = new Progress('plain', (text) => lines.push(text));
  progress.seed(run('failed', [node('greet', 'succeeded', '2026-11-29T10:00:00Z', '2026-11-29T10:00:01Z'),
    node('break', 'failed', '2026-11-29T10:00:01Z', '2026-11-29T10:00:02Z')]));
  const after = run('failed', [node('greet', 'succeeded', '2026-11-29T10:00:00Z', '2026-11-29T10:00:01Z'),
    node('break', 'failed', '2026-11-29T10:05:00Z', '2026-11-29T10:05:01Z')]);
  progress.starts(progress.through(after, 2));
  progress.update(after);
  progress.update(after);
  assert.deepEqual(told(lines), ['step break running', 'step break failed (1.0s)']);
});

test('a retried step seen with its old start is not told until it starts anew', () => {
  const lines: string[] = [];
  const progress = new Progress('plain', (text) => lines.push(text));
  const before = run('failed', [node('break', 'failed', '2026-11-29T10:00:01Z', '2026-11-29T10:00:02Z')]);
  progress.seed(before);
  progress.update(before);
  assert.deepEqual(told(lines), []);
  progress.update(run('running', [node('break', 'running', '2026-11-29T10:05:00Z', '')]));
  progress.update(run('failed', [node('break', 'failed', '2026-11-29T10:05:00Z', '2026-11-29T10:05:02Z')]));
  assert.deepEqual(told(lines), ['dag-run breaks b1 running', 'step break running', 'step break failed (2.0s)']);
});

test('the live view is drawn before the first output it is told of, though a step had ended before the first look', () => {
  const lines: string[] = [];
  const progress = new Progress('live', (text) => lines.push(text));
  const seen = run('running', [node('greet', 'succeeded', '2026-11-29T10:00:00Z', '2026-11-29T10:00:01Z'), node('break', 'running', '2026-11-29T10:00:01Z', '')]);
  progress.starts(progress.through(seen, 1));
  progress.output(seen, 'greet', 'stdout', 'hello', 'greet | ');
  progress.end({ ...seen, statusLabel: 'succeeded' });
  assert.match(lines[0], /^breaks b1 {2}running/);
  assert.match(lines.join(''), /✔ greet +succeeded[^]*greet \| hello\n/);
});
