// The dashboard's step graph layout (ui/graph-layout.ts): layers by longest path, the order in
// each layer by barycenter sweeps, and what it does with names it cannot place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { countCrossings, defaultSizes, layoutGraph, type LayoutStep } from '../ui/graph-layout.ts';

const at = (layout: ReturnType<typeof layoutGraph>, name: string) => layout.nodes.find((n) => n.name === name)!;

test('a diamond is three layers: a, then b and c, then d; every dependency is one edge, drawn left to right', () => {
  const layout = layoutGraph([{ name: 'a' }, { name: 'b', depends: ['a'] }, { name: 'c', depends: ['a'] }, { name: 'd', depends: ['b', 'c'] }]);
  assert.deepEqual(layout.layers, [['a'], ['b', 'c'], ['d']]);
  assert.deepEqual(layout.edges.map((e) => `${e.from}>${e.to}`).sort(), ['a>b', 'a>c', 'b>d', 'c>d']);
  for (const e of layout.edges) assert.ok(e.x1 < e.x2, `${e.from}>${e.to} points right`);
  // The single nodes are centred against the two in the middle layer.
  assert.equal(at(layout, 'a').y + defaultSizes.nodeHeight / 2, (at(layout, 'b').y + at(layout, 'c').y + defaultSizes.nodeHeight) / 2);
  assert.ok(layout.width >= at(layout, 'd').x + defaultSizes.nodeWidth && layout.height >= at(layout, 'c').y + defaultSizes.nodeHeight);
});

test('a step sits one layer past its longest chain of dependencies, not its shortest', () => {
  const layout = layoutGraph([{ name: 'a' }, { name: 'b', depends: ['a'] }, { name: 'c', depends: ['b'] }, { name: 'z', depends: ['a', 'c'] }]);
  assert.equal(at(layout, 'z').layer, 3);
  assert.equal(at(layout, 'a').layer, 0);
});

test('the barycenter sweeps uncross edges the definition order would cross', () => {
  // Listed crosswise: a1 feeds the last of the second layer, a2 the first.
  const steps: LayoutStep[] = [
    { name: 'a1' }, { name: 'a2' }, { name: 'a3' },
    { name: 'b3', depends: ['a3'] }, { name: 'b2', depends: ['a2'] }, { name: 'b1', depends: ['a1'] },
    { name: 'c1', depends: ['b1'] }, { name: 'c3', depends: ['b3'] },
  ];
  const layout = layoutGraph(steps);
  assert.equal(countCrossings(layout), 0);
  const firstOrder = layout.layers[1];
  assert.notDeepEqual(firstOrder, ['b3', 'b2', 'b1'], 'the middle layer was reordered');
});

test('unknown dependencies, a step depending on itself, repeated names and an empty list are drawn without failing', () => {
  const layout = layoutGraph([{ name: 'a', depends: ['ghost', 'a'] }, { name: 'b', depends: ['a'] }, { name: 'a', depends: ['b'] }]);
  assert.deepEqual(layout.nodes.map((n) => [n.name, n.layer]), [['a', 0], ['b', 1]]);
  assert.deepEqual(layout.edges.map((e) => `${e.from}>${e.to}`), ['a>b']);
  const empty = layoutGraph([]);
  assert.deepEqual([empty.nodes, empty.edges, empty.width, empty.height], [[], [], 0, 0]);
});

test('steps in a cycle (a definition error) still get a place each', () => {
  const layout = layoutGraph([{ name: 'a', depends: ['c'] }, { name: 'b', depends: ['a'] }, { name: 'c', depends: ['b'] }, { name: 'x' }]);
  assert.equal(layout.nodes.length, 4);
  assert.ok(layout.nodes.every((n) => Number.isFinite(n.x) && Number.isFinite(n.y)));
});

test('500 steps in a wide, deep graph are laid out, every node in its own place (the time is printed)', () => {
  // 25 layers of 20; each step depends on two steps of the layer before, crosswise.
  const steps: LayoutStep[] = [];
  for (let layer = 0; layer < 25; layer++) {
    for (let i = 0; i < 20; i++) {
      const depends = layer === 0 ? [] : [`s${layer - 1}-${(i * 7) % 20}`, `s${layer - 1}-${(i * 3 + 5) % 20}`];
      steps.push({ name: `s${layer}-${i}`, depends });
    }
  }
  layoutGraph(steps);
  const started = performance.now();
  const layout = layoutGraph(steps);
  const ms = performance.now() - started;
  console.log(`layout of ${steps.length} steps and ${layout.edges.length} edges: ${ms.toFixed(1)} ms`);
  assert.equal(layout.nodes.length, 500);
  assert.equal(layout.layers.length, 25);
  const places = new Set(layout.nodes.map((n) => `${n.x},${n.y}`));
  assert.equal(places.size, 500);
});
