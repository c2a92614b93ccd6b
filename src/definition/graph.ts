// Dependency checks over the flattened steps: unknown names and cycles.
import type { Step } from '../core/index.ts';

export function dependencyIssues(steps: Step[]): Array<{ index: number; message: string }> {
  const issues: Array<{ index: number; message: string }> = [];
  const byName = new Map<string, number>();
  const unique = new Set(steps.map((step) => step.name)).size === steps.length;
  steps.forEach((step, index) => {
    byName.set(step.name, index);
    if (step.id) byName.set(step.id, index);
  });
  steps.forEach((step, index) => {
    for (const dependency of step.depends) {
      if (!byName.has(dependency)) issues.push({ index, message: `unknown step "${dependency}"` });
      else if (unique && byName.get(dependency) === index) issues.push({ index, message: `step "${step.name}" depends on itself` });
    }
  });
  // Duplicate names are reported on their own; a cycle among them cannot be told apart.
  if (issues.length > 0 || !unique) return issues;
  // Depth-first with its own stack: a chain of many thousand steps neither overflows the call stack
  // nor copies its path at every level.
  const state = new Uint8Array(steps.length);
  const dependenciesOf = steps.map((step) => step.depends.map((dependency) => byName.get(dependency)!));
  for (let start = 0; start < steps.length; start++) {
    if (state[start] !== 0) continue;
    const stack: Array<{ index: number; next: number }> = [{ index: start, next: 0 }];
    state[start] = 1;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      const dependencies = dependenciesOf[frame.index];
      if (frame.next >= dependencies.length) {
        state[frame.index] = 2;
        stack.pop();
        continue;
      }
      const dependency = dependencies[frame.next++];
      if (state[dependency] === 2) continue;
      if (state[dependency] === 1) {
        const from = stack.findIndex((entry) => entry.index === dependency);
        const cycle = [...stack.slice(from).map((entry) => entry.index), dependency];
        issues.push({ index: cycle[0], message: `dependency cycle: ${cycleText(cycle.map((i) => steps[i].name))}` });
        return issues;
      }
      state[dependency] = 1;
      stack.push({ index: dependency, next: 0 });
    }
  }
  return issues;
}

/** Resolves depends entries (names or ids) to step names. */
export function dependencyNames(steps: Step[]): Map<string, string[]> {
  const nameOf = new Map<string, string>();
  for (const step of steps) {
    nameOf.set(step.name, step.name);
    if (step.id) nameOf.set(step.id, step.name);
  }
  return new Map(steps.map((step) => [step.name, step.depends.map((dependency) => nameOf.get(dependency) ?? dependency)]));
}

/** A cycle's path, `a -> b -> a`; a long one (thousands of steps, a chain of files) is named by its ends. */
export function cycleText(path: string[]): string {
  const shown = path.length > 12 ? [...path.slice(0, 5), `... (${path.length - 10} more)`, ...path.slice(-5)] : path;
  return shown.join(' -> ');
}
