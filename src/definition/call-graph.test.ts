import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDag } from './dag-parser.ts';
import { callCycles } from './call-graph.ts';

const parsed = (text: string) => parseDag(text, { baseDir: '/d' });

test('a chain of 20,000 DAG files closed into a cycle is found without deep recursion', () => {
  const files = new Map<string, ReturnType<typeof parsed>>();
  const size = 20_000;
  const template = parsed('steps:\n  - call: next\n');
  for (let i = 0; i < size; i++) {
    const dag = { ...template.dag!, steps: [{ ...template.dag!.steps[0], call: `d${(i + 1) % size}` }] };
    files.set(`d${i}`, { ...template, dag });
  }
  const cycles = callCycles({ fileName: 'd0', parsed: files.get('d0')! }, (name) => files.get(name));
  assert.equal(cycles.length, 1);
  assert.equal(cycles[0], `call cycle: d0 -> d1 -> d2 -> d3 -> d4 -> ... (${size + 1 - 10} more) -> d${size - 4} -> d${size - 3} -> d${size - 2} -> d${size - 1} -> d0`);
});

test('a diamond of calls is no cycle; a target with a variable is not followed', () => {
  const files = new Map([
    ['b', parsed('steps:\n  - call: d\n')],
    ['c', parsed('steps:\n  - call: d\n')],
    ['d', parsed('steps:\n  - call: ${X}\n')],
  ]);
  assert.deepEqual(callCycles({ fileName: 'a', parsed: parsed('type: graph\nsteps:\n  - call: b\n  - call: c\n') }, (name) => files.get(name)), []);
});
