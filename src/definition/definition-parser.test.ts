import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDag } from './dag-parser.ts';
import { DefinitionParser, type ParseTask } from './definition-parser.ts';
import readInWorker from './parse-worker.ts';

// What crosses to and from the parse thread is structured-cloned: a result that held a function,
// a Map or a class instance would fail here or come back different.
const overTheBoundary = async (task: ParseTask) => structuredClone(readInWorker(structuredClone(task)));
const threaded = new DefinitionParser(overTheBoundary, 0);

const texts: Record<string, string> = {
  valid: 'name: demo\nparams: [A: 1]\nenv:\n  - K: v\nschedule: "5 4 * * *"\nsteps:\n  - echo one\n  - - echo a\n    - echo b\n  - name: c\n    call: local-one\n    continueOn: { failure: true }\n    retryPolicy: { limit: 2, intervalSec: 1 }\n---\nname: local-one\nsteps:\n  - echo in\n',
  problems: 'name: "bad name!"\nstepz: []\nsteps:\n  - name: a\n    command: x\n    depends: nope\n  - call: missing\n---\nname: dup\nsteps:\n  - call: other-missing\n---\nname: dup\nsteps: []\n',
  calls: 'steps:\n  - call: stored\n  - call: missing.yaml\n  - call: ${VAR}\n  - executor: { type: dag }\n    command: also-missing\n',
  yamlError: 'steps:\n  - echo [\n',
  empty: '# nothing\n',
};

test('a definition parsed through the worker entry, across a structured clone, equals the parse on this thread', async () => {
  for (const [shape, text] of Object.entries(texts)) {
    for (const options of [{ fileName: 'demo', baseDir: '/dags' }, { nameOverride: 'inline', baseDir: '/dags' }]) {
      assert.deepEqual(await threaded.parse(text, options), parseDag(text, options), `${shape} with ${JSON.stringify(options)}`);
    }
  }
});

test('a worker that cannot answer is an internal error, not a crash', async () => {
  const broken = new DefinitionParser(async () => { throw new Error('worker exited'); }, 0);
  await assert.rejects(broken.parse('steps: [echo]\n', { baseDir: '/dags' }), { code: 'internal_error', message: /could not be parsed: worker exited/ });
  const inline = new DefinitionParser(async () => { throw new Error('not used'); });
  assert.deepEqual((await inline.parse('steps: [echo]\n', { fileName: 'small', baseDir: '/dags' })).errors, []);
});
