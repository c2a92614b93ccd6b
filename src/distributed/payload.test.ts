import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunInput } from '../actors/index.ts';
import { isUnder, movePaths, withSystemEnv } from './payload.ts';

const server = { logs: '/srv/troupe/logs', dags: '/srv/troupe/dags' };
const worker = { logs: '/scratch/w1/logs', dags: '/scratch/w1/dags' };

test('paths under the server\'s folders move under the worker\'s and back; other strings stay', () => {
  const value = { log: '/srv/troupe/logs/d/1.a.run.log', dir: '/srv/troupe/dags', nodes: [{ stdout: '/srv/troupe/logs/d/1.a.001.s.out' }], other: '/srv/troupe/logsX/y', text: 'cat /srv/troupe/logs/x', n: 3 };
  const moved = movePaths(value, server, worker);
  assert.deepEqual(moved, { log: '/scratch/w1/logs/d/1.a.run.log', dir: '/scratch/w1/dags', nodes: [{ stdout: '/scratch/w1/logs/d/1.a.001.s.out' }], other: '/srv/troupe/logsX/y', text: 'cat /srv/troupe/logs/x', n: 3 });
  assert.deepEqual(movePaths(moved, worker, server), value);
});

test('a path is under a folder only inside it, with no way out through ..', () => {
  assert.equal(isUnder('/srv/logs', '/srv/logs/a/b.out'), true);
  assert.equal(isUnder('/srv/logs', '/srv/logs'), true);
  assert.equal(isUnder('/srv/logs', '/srv/logs/../secrets'), false);
  assert.equal(isUnder('/srv/logs', '/srv/logsX/a'), false);
  assert.equal(isUnder('/srv/logs', 'relative/a'), false);
  // Plain paths are read as text; any other is resolved: the answers agree.
  const slow = (root: string, path: string) => isUnder(root, path.replace(/^\//, '/./'));
  for (const root of ['/srv/logs', '/srv/logs/', '/', '/srv/./logs', '/srv//logs']) {
    for (const path of ['/srv/logs', '/srv/logs/', '/srv/logs/a', '/srv/logs/a/', '/srv/log', '/srv/logsX', '/srv', '/', '/srv/logs/..', '/srv/logs/../x', '/srv/logs/./a', '/srv/logs//a', '/srv/logs/.hidden', '/srv/logs/..x', '/x/srv/logs']) {
      assert.equal(isUnder(root, path), slow(root, path), `${path} under ${root}`);
    }
  }
});

test('the worker\'s system variables take the place of the server\'s, unless the run set its own', () => {
  const input = { record: {}, plan: { baseEnv: { PATH: '/server/bin', HOME: '/root', LANG: 'C', PARAM: 'x', TZ: 'UTC' } } } as unknown as RunInput;
  const moved = withSystemEnv(input, { PATH: '/server/bin', HOME: '/root', LANG: 'C.UTF-8', TZ: 'UTC' }, { PATH: '/worker/bin', HOME: '/home/w', USER: 'w' });
  // PATH and HOME were the server's: the worker's now. LANG was the run's own (it differs): kept. TZ: the worker has none.
  assert.deepEqual(moved.plan.baseEnv, { PATH: '/worker/bin', HOME: '/home/w', LANG: 'C', PARAM: 'x', USER: 'w' });
});
