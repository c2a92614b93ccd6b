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
  const state = new Array<0 | 1 | 2>(steps.length).fill(0);
  const visit = (index: number, trail: number[]): number[] | undefined => {
    if (state[index] === 2) return undefined;
    if (state[index] === 1) return [...trail.slice(trail.indexOf(index)), index];
    state[index] = 1;
    for (const dependency of steps[index].depends) {
      const cycle = visit(byName.get(dependency)!, [...trail, index]);
      if (cycle) return cycle;
    }
    state[index] = 2;
    return undefined;
  };
  for (let index = 0; index < steps.length; index++) {
    const cycle = visit(index, []);
    if (cycle) {
      issues.push({ index: cycle[0], message: `dependency cycle: ${cycle.map((i) => steps[i].name).join(' -> ')}` });
      break;
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
