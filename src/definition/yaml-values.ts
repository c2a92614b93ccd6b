// A parsed YAML document -> plain values, in one walk. The `yaml` library's own conversion looks
// up each alias's anchor by scanning every anchor and alias before it (and every node of the
// document for an alias nested in an anchored node), which made 5,000 aliases in 61 KB cost most
// of a second; here anchors are found in a map kept as the walk meets them, in document order, so
// an alias names the latest anchor of its name before it, as the library and YAML have it.
// What the library gives for each node is kept: maps become objects (a key that is a collection
// reads as its flow text), merge keys copy what is missing, !!set and !!omap (composed as !!pairs,
// yaml-source.ts) become Set and Map.
import { Document, isAlias, isMap, isPair, isScalar, isSeq, type Alias, type Pair } from 'yaml';

/**
 * Aliases are resolved as shared values, so that many uses of one anchor cost nothing to build;
 * what bounds a document is how far they expand. Alias uses count against the aliases nested in
 * what they name (a billion laughs fails at once); a big anchor used many times is counted as the
 * values the definition holds once expanded, since everything downstream walks the expanded tree.
 */
export const MAX_ALIAS_COUNT = 10_000;
export const MAX_EXPANDED_VALUES = 1_000_000;

const TOO_MANY_ALIASES = `too many aliases: their uses, times the aliases nested in what they name, exceed ${MAX_ALIAS_COUNT}`;
const TOO_LARGE = `aliases expand the document to more than ${MAX_EXPANDED_VALUES} values`;
const CYCLE = 'an alias names a node that contains it: the definition would be infinite';
const SET_TAG = 'tag:yaml.org,2002:set';
const OMAP_TAG = 'tag:yaml.org,2002:omap';

export function documentValue(doc: Document, mayHaveAliases: boolean): { value: unknown } | { problem: string } {
  let value: unknown;
  try {
    value = new ValueBuilder().build(doc.contents);
  } catch (error) {
    if (error instanceof Refusal) return { problem: error.message };
    return { problem: `the document cannot be read: ${(error as Error).message.split('\n')[0]}` };
  }
  if (!mayHaveAliases) return { value };
  const size = expandedSize(value);
  if (size === 'cycle') return { problem: CYCLE };
  if (size > MAX_EXPANDED_VALUES) return { problem: TOO_LARGE };
  return { value };
}

class Refusal extends Error {}

interface Anchor {
  value: unknown;
  /** The anchored node itself, and then each alias to it (the library's count). */
  uses: number;
  /**
   * The largest weight of an alias inside it (1 for a scalar): a use counts this many times. Taken
   * when the node is built; the library takes it at the first use, after any later uses of the
   * aliases inside, which the expanded size bounds all the same.
   */
  weight: number;
}

class ValueBuilder {
  private readonly anchors = new Map<string, Anchor>();
  /** Objects built from YAML maps: the only sources a merge key takes. */
  private readonly maps = new WeakSet<object>();
  /** Values of anchors being built, which an alias inside them names (a cycle). */
  private readonly open = new Set<object>();
  private merged = 0;
  /** The weight of the node built last (see Anchor.weight), carried up to the anchors around it. */
  private weight = 0;

  build(node: unknown): unknown {
    if (isAlias(node)) return this.resolve(node).value;
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) {
      this.weight = 1;
      return node ?? null;
    }
    const anchor: Anchor | undefined = node.anchor ? { value: undefined, uses: 1, weight: 0 } : undefined;
    // Registered before its children are built: an alias inside names it (a cycle, found later).
    if (anchor) this.anchors.set(node.anchor!, anchor);
    let value: unknown;
    if (isScalar(node)) {
      value = node.value;
      if (anchor) anchor.value = value;
      this.weight = 1;
    } else if (isMap(node)) {
      const target: Record<string, unknown> | Set<unknown> = node.tag === SET_TAG ? new Set() : {};
      this.opened(anchor, target);
      let weight = 0;
      for (const pair of node.items) {
        if (target instanceof Set) {
          target.add(this.build(pair.key));
          weight = Math.max(weight, this.weight);
        } else {
          weight = Math.max(weight, this.addPair(target, pair));
        }
      }
      if (!(target instanceof Set)) this.maps.add(target);
      this.weight = weight;
      value = target;
    } else if (node.tag === OMAP_TAG) {
      const target = new Map<unknown, unknown>();
      this.opened(anchor, target);
      let weight = 0;
      for (const item of node.items) {
        const key = this.build(isPair(item) ? item.key : item);
        weight = Math.max(weight, this.weight);
        if (target.has(key)) throw new Error('Ordered maps must not include duplicate keys');
        target.set(key, isPair(item) ? this.build(item.value) : null);
        if (isPair(item)) weight = Math.max(weight, this.weight);
      }
      this.weight = weight;
      value = target;
    } else {
      const target: unknown[] = [];
      this.opened(anchor, target);
      let weight = 0;
      for (const item of node.items) {
        if (isPair(item)) {
          // A pair in a sequence (`[a: 1]`) is a map of one entry.
          const single: Record<string, unknown> = {};
          weight = Math.max(weight, this.addPair(single, item));
          target.push(single);
        } else {
          target.push(this.build(item));
          weight = Math.max(weight, this.weight);
        }
      }
      this.weight = weight;
      value = target;
    }
    if (anchor) {
      anchor.weight = this.weight;
      if (typeof value === 'object' && value !== null) this.open.delete(value);
    }
    return value;
  }

  private opened(anchor: Anchor | undefined, value: object): void {
    if (!anchor) return;
    anchor.value = value;
    this.open.add(value);
  }

  /** One use of an alias: its anchor's value, counted against the limit. */
  private resolve(alias: Alias): Anchor {
    const anchor = this.anchors.get(alias.source);
    if (!anchor) throw new Refusal(`alias *${alias.source} names no anchor before it`);
    anchor.uses++;
    if (anchor.uses * anchor.weight > MAX_ALIAS_COUNT) throw new Refusal(TOO_MANY_ALIASES);
    this.weight = anchor.uses * anchor.weight;
    return anchor;
  }

  /** Adds one entry to a map's object, as the library does; the entry's weight. */
  private addPair(target: Record<string, unknown>, pair: Pair): number {
    if (isMergeKey(pair.key)) return this.merge(target, pair.value);
    const key = this.build(pair.key);
    const keyWeight = this.weight;
    const text = keyText(pair.key, key);
    const value = this.build(pair.value);
    // `in`, not own keys: a key named like a property of Object.prototype (__proto__) must become
    // an own property, never reach the prototype.
    if (text in target) Object.defineProperty(target, text, { value, writable: true, enumerable: true, configurable: true });
    else target[text] = value;
    return Math.max(keyWeight, this.weight);
  }

  /** `<<: source` or `<<: [sources]`: the entries the map does not have yet, taken from each map. */
  private merge(target: Record<string, unknown>, node: unknown): number {
    const source = this.build(node);
    const weight = Math.max(1, this.weight);
    for (const from of Array.isArray(source) ? source : [source]) {
      if (from !== null && typeof from === 'object' && this.open.has(from)) throw new Refusal(CYCLE);
      if (from === null || typeof from !== 'object' || !this.maps.has(from)) throw new Error('Merge sources must be maps or map aliases');
      const keys = Object.keys(from);
      // Each key looked at is work, whether copied or not: a big map merged many times is bounded
      // as the aliases that expand it are.
      this.merged += keys.length;
      if (this.merged > MAX_EXPANDED_VALUES) throw new Refusal(TOO_LARGE);
      for (const key of keys) {
        if (Object.prototype.hasOwnProperty.call(target, key)) continue;
        Object.defineProperty(target, key, { value: (from as Record<string, unknown>)[key], writable: true, enumerable: true, configurable: true });
      }
    }
    return weight;
  }

}

function isMergeKey(key: unknown): boolean {
  if (!isScalar(key)) return false;
  if (typeof key.value === 'symbol') return key.value.description === '<<';
  return key.value === '<<' && (!key.type || key.type === 'PLAIN');
}

/** A map key as the library writes it into an object: null as '', a collection as its flow text. */
function keyText(node: unknown, key: unknown): string {
  if (key === null || key === undefined) return '';
  if (typeof key !== 'object') return String(key);
  try {
    return new Document(node).toString({ collectionStyle: 'flow', verifyAliasOrder: false }).trimEnd();
  } catch {
    return JSON.stringify(key) ?? String(key);
  }
}

/** Values in the tree once every alias is expanded; each shared node is measured once. */
function expandedSize(root: unknown): number | 'cycle' {
  const sizes = new Map<object, number>();
  const open = new Set<object>();
  // Its own stack: a deeply nested document must not overflow the call stack.
  const stack: Array<{ node: object; children: unknown[]; index: number; total: number }> = [];
  const enter = (node: unknown): number | 'cycle' | undefined => {
    if (node === null || typeof node !== 'object') return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (open.has(node)) return 'cycle';
    open.add(node);
    const children = node instanceof Map ? [...node.values()] : node instanceof Set ? [...node] : Array.isArray(node) ? node : Object.values(node);
    stack.push({ node, children, index: 0, total: 1 });
    return undefined;
  };
  let result = enter(root);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    if (frame.index < frame.children.length) {
      const size = enter(frame.children[frame.index++]);
      if (size === 'cycle') return 'cycle';
      if (size !== undefined) frame.total = Math.min(frame.total + size, Number.MAX_SAFE_INTEGER);
      continue;
    }
    stack.pop();
    open.delete(frame.node);
    sizes.set(frame.node, frame.total);
    result = frame.total;
    const parent = stack[stack.length - 1];
    if (parent) parent.total = Math.min(parent.total + frame.total, Number.MAX_SAFE_INTEGER);
  }
  return result ?? 1;
}
