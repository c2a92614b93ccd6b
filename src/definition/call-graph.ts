// Call cycles between DAGs: a step's `call`/`run` (or the dag executor's command) names a local DAG
// of its own file or a DAG file, resolved as the engine resolves it when the step runs. A cycle
// would start sub DAG runs until the runtime nesting limit stops them, so it is refused where the
// definitions can be seen. Targets with variables are decided at run time and are not followed.
import type { Dag, Step } from '../core/index.ts';
import type { ParseResult } from './dag-parser.ts';
import { cycleText } from './graph.ts';

/** The definitions of one file, as parsed: its main DAG and its local DAGs. */
export type ParsedFile = Pick<ParseResult, 'dag' | 'localDags'>;

export interface CallRoot {
  /** The DAG file the text is (or will be) stored as; absent for an inline run's spec. */
  fileName?: string;
  parsed: ParsedFile;
}

interface CallNode {
  key: string;
  /** The name a call uses for it: the file name, or the local DAG's name. */
  label: string;
  file: ParsedFile;
  fileKey: string;
  dag?: Dag;
}

/**
 * The call cycles reachable from a file's DAGs (its main DAG first, then its local DAGs), one
 * message each, like `call cycle: a -> b -> a`. `stored` gives the parse of another DAG file, or
 * undefined when there is none. The search keeps its own stack: a long chain of files cannot
 * overflow the call stack.
 */
export function callCycles(root: CallRoot, stored: (fileName: string) => ParsedFile | undefined): string[] {
  const rootKey = root.fileName === undefined ? '\u0000inline' : `file:${root.fileName}`;
  const files = new Map<string, ParsedFile | undefined>([[rootKey, root.parsed]]);
  const fileOf = (fileName: string): ParsedFile | undefined => {
    const key = `file:${fileName}`;
    if (!files.has(key)) files.set(key, stored(fileName));
    return files.get(key);
  };
  const mainNode = (file: ParsedFile, fileKey: string, label: string): CallNode =>
    ({ key: `${fileKey}\u0000`, label, file, fileKey, dag: file.dag });
  const edges = (node: CallNode): CallNode[] => {
    const out: CallNode[] = [];
    for (const target of callTargets(node.dag)) {
      const local = node.file.localDags.find((candidate) => candidate.name === target);
      if (local) {
        out.push({ key: `${node.fileKey}\u0000${target}`, label: target, file: node.file, fileKey: node.fileKey, dag: local.dag });
        continue;
      }
      const fileKey = `file:${target}`;
      const file = fileKey === rootKey ? root.parsed : fileOf(target);
      if (file) out.push(mainNode(file, fileKey, target));
    }
    return out;
  };

  const rootLabel = root.fileName ?? root.parsed.dag?.name ?? 'inline';
  const starts = [mainNode(root.parsed, rootKey, rootLabel), ...root.parsed.localDags.map((local) =>
    ({ key: `${rootKey}\u0000${local.name}`, label: local.name, file: root.parsed, fileKey: rootKey, dag: local.dag }))];
  const done = new Set<string>();
  const cycles: string[] = [];
  for (const start of starts) {
    if (done.has(start.key)) continue;
    const stack: Array<{ node: CallNode; next: CallNode[]; index: number }> = [{ node: start, next: edges(start), index: 0 }];
    const onStack = new Map<string, number>([[start.key, 0]]);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.index >= frame.next.length) {
        stack.pop();
        onStack.delete(frame.node.key);
        done.add(frame.node.key);
        continue;
      }
      const child = frame.next[frame.index++];
      if (done.has(child.key)) continue;
      const at = onStack.get(child.key);
      if (at !== undefined) {
        cycles.push(`call cycle: ${cycleText([...stack.slice(at).map((entry) => entry.node.label), child.label])}`);
        continue;
      }
      onStack.set(child.key, stack.length);
      stack.push({ node: child, next: edges(child), index: 0 });
    }
  }
  return cycles;
}

/** The DAGs a DAG's steps and handlers call, without `.yaml`; targets holding variables are left out. */
export function callTargets(dag: Dag | undefined): string[] {
  if (!dag) return [];
  const steps = [...dag.steps, ...Object.values(dag.handlerOn)];
  const targets = new Set<string>();
  for (const step of steps) {
    const called = step && calledDag(step);
    if (called) targets.add(called.name);
  }
  return [...targets];
}

/**
 * The DAG a step calls (`call`, or the dag executor's command): as written, and its name without
 * `.yaml`. Undefined when the step calls none or the target holds a variable.
 */
export function calledDag(step: Step): { written: string; name: string } | undefined {
  const written = step.call ?? (step.executor.type === 'dag' ? step.command : undefined);
  return written === undefined || written.includes('$') ? undefined : { written, name: written.replace(/\.ya?ml$/, '') };
}
