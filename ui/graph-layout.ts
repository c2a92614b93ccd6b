// Lays a DAG's steps out left to right: a step's layer is its longest path from a step without
// dependencies, and the order within each layer comes from barycenter sweeps, which keep a step
// near the steps it is joined to and so cut edge crossings. Pure: no DOM, so it is unit-tested.

export interface LayoutStep { name: string; depends?: string[] }

export interface LaidNode { name: string; layer: number; order: number; x: number; y: number }

export interface LaidEdge { from: string; to: string; x1: number; y1: number; x2: number; y2: number }

export interface GraphLayout { nodes: LaidNode[]; edges: LaidEdge[]; width: number; height: number; layers: string[][] }

export interface LayoutSizes { nodeWidth: number; nodeHeight: number; gapX: number; gapY: number; padding: number }

export const defaultSizes: LayoutSizes = { nodeWidth: 168, nodeHeight: 36, gapX: 56, gapY: 14, padding: 8 };

// Each sweep pair is O(edges); more sweeps than this rarely remove another crossing.
const SWEEPS = 4;

export function layoutGraph(steps: readonly LayoutStep[], sizes: LayoutSizes = defaultSizes): GraphLayout {
  // A repeated name keeps its first step, and a dependency on no step is left out: the
  // definition's problems are shown elsewhere, the graph draws what can be drawn.
  const names: string[] = [];
  const preds = new Map<string, string[]>();
  const first: LayoutStep[] = [];
  for (const step of steps) if (!preds.has(step.name)) { preds.set(step.name, []); names.push(step.name); first.push(step); }
  for (const step of first) {
    const list = preds.get(step.name)!;
    for (const dep of step.depends ?? []) if (preds.has(dep) && dep !== step.name && !list.includes(dep)) list.push(dep);
  }
  const succs = new Map<string, string[]>(names.map((n) => [n, []]));
  for (const name of names) for (const dep of preds.get(name)!) succs.get(dep)!.push(name);

  const layerOf = longestPathLayers(names, preds, succs);
  const layerCount = names.length === 0 ? 0 : Math.max(...layerOf.values()) + 1;
  const layers: string[][] = Array.from({ length: layerCount }, () => []);
  for (const name of names) layers[layerOf.get(name)!].push(name);

  orderLayers(layers, preds, succs);

  const widest = Math.max(0, ...layers.map((l) => l.length));
  const rowStep = sizes.nodeHeight + sizes.gapY;
  const byName = new Map<string, LaidNode>();
  layers.forEach((layer, li) => {
    // A shorter layer is centred against the widest one.
    const offset = ((widest - layer.length) * rowStep) / 2;
    layer.forEach((name, order) => {
      byName.set(name, { name, layer: li, order, x: sizes.padding + li * (sizes.nodeWidth + sizes.gapX), y: sizes.padding + offset + order * rowStep });
    });
  });
  const nodes = names.map((n) => byName.get(n)!);
  const edges: LaidEdge[] = [];
  for (const to of names) {
    const target = byName.get(to)!;
    for (const from of preds.get(to)!) {
      const source = byName.get(from)!;
      edges.push({ from, to, x1: source.x + sizes.nodeWidth, y1: source.y + sizes.nodeHeight / 2, x2: target.x, y2: target.y + sizes.nodeHeight / 2 });
    }
  }
  return {
    nodes,
    edges,
    layers,
    width: layerCount === 0 ? 0 : 2 * sizes.padding + layerCount * sizes.nodeWidth + (layerCount - 1) * sizes.gapX,
    height: widest === 0 ? 0 : 2 * sizes.padding + widest * rowStep - sizes.gapY,
  };
}

/** Kahn's order, each step one layer past its latest dependency; steps caught in a cycle follow what they can. */
function longestPathLayers(names: string[], preds: Map<string, string[]>, succs: Map<string, string[]>): Map<string, number> {
  const layer = new Map<string, number>();
  const waiting = new Map(names.map((n) => [n, preds.get(n)!.length]));
  const ready = names.filter((n) => waiting.get(n) === 0);
  for (const n of ready) layer.set(n, 0);
  for (let i = 0; i < ready.length; i++) {
    const name = ready[i];
    for (const next of succs.get(name)!) {
      layer.set(next, Math.max(layer.get(next) ?? 0, layer.get(name)! + 1));
      const left = waiting.get(next)! - 1;
      waiting.set(next, left);
      if (left === 0) ready.push(next);
    }
  }
  // A cycle is a definition error the server refuses; a step in one still gets a place.
  for (const name of names) if (waiting.get(name)! > 0) layer.set(name, layer.get(name) ?? 0);
  return layer;
}

function orderLayers(layers: string[][], preds: Map<string, string[]>, succs: Map<string, string[]>): void {
  const position = new Map<string, number>();
  const index = (layer: string[]) => layer.forEach((n, i) => position.set(n, i));
  layers.forEach(index);
  const sortBy = (layer: string[], neighbours: Map<string, string[]>) => {
    const key = new Map<string, number>();
    for (const name of layer) {
      const around = neighbours.get(name)!;
      // A step joined to nothing on that side keeps its place.
      key.set(name, around.length === 0 ? position.get(name)! : around.reduce((sum, n) => sum + position.get(n)!, 0) / around.length);
    }
    // Array.prototype.sort is stable: ties keep the definition's order.
    layer.sort((a, b) => key.get(a)! - key.get(b)!);
    index(layer);
  };
  for (let sweep = 0; sweep < SWEEPS; sweep++) {
    for (let i = 1; i < layers.length; i++) sortBy(layers[i], preds);
    for (let i = layers.length - 2; i >= 0; i--) sortBy(layers[i], succs);
  }
}

/** Crossings between edges that join neighbouring layers: what the ordering tries to keep low. */
export function countCrossings(layout: GraphLayout): number {
  const node = new Map(layout.nodes.map((n) => [n.name, n]));
  const short = layout.edges.map((e) => [node.get(e.from)!, node.get(e.to)!] as const).filter(([a, b]) => b.layer === a.layer + 1);
  let crossings = 0;
  for (let i = 0; i < short.length; i++) {
    for (let j = i + 1; j < short.length; j++) {
      const [a1, b1] = short[i];
      const [a2, b2] = short[j];
      if (a1.layer !== a2.layer) continue;
      if ((a1.order - a2.order) * (b1.order - b2.order) < 0) crossings++;
    }
  }
  return crossings;
}
