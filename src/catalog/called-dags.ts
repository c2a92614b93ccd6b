// The DAG files a definition calls, through its sub DAG steps and theirs: what a run placed on a
// worker takes with it, since a worker has no DAG files of its own. A local DAG of a file travels
// in that file's text. A target named through a variable (`call: ${CHILD}`) of the run's own
// definition travels when the run's variables (its params and env, known as it is planned) name
// it; one named through a step's output, or in a called file, is known only as the step runs.
import { ownValue, type Dag } from '../core/index.ts';
import { expandVariables } from '../definition/index.ts';
import type { Definitions } from './definitions.ts';

/**
 * File name -> text of every DAG file `specText` calls, directly or through the files it calls.
 * `variables`: the run's own, which a variable target of `specText` itself is expanded with.
 */
export async function calledDagFiles(definitions: Definitions, specText: string, variables: Readonly<Record<string, string>> = {}): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  let texts = [specText];
  // Each file is taken once, so that a cycle of calls ends.
  for (let depth = 0; texts.length > 0; depth++) {
    const next: string[] = [];
    for (const text of texts) {
      for (const named of await targetsIn(definitions, text)) {
        const target = named.includes('$') && depth === 0 ? expanded(named, variables) : named;
        if (target.includes('$') || Object.hasOwn(files, target)) continue;
        // Read at each hand: the file's text as the catalog has it now (a name that is not a DAG's is none).
        const loaded = await definitions.loadDag(target);
        if (!loaded) continue;
        files[target] = loaded.text;
        next.push(loaded.text);
      }
    }
    texts = next;
  }
  return files;
}

/** The target its references name, as the step would expand it; one without a value is left as it is (and stays unknown). */
function expanded(target: string, variables: Readonly<Record<string, string>>): string {
  return expandVariables(target, (name) => ownValue(variables, name)).replace(/\.ya?ml$/, '');
}

/** How many definitions' targets are kept: a run handed to a worker is not parsed again for them. */
const KEPT_TARGETS = 256;
const keptTargets = new WeakMap<Definitions, Map<string, readonly string[]>>();

/** The DAG files a definition's text calls (its own local DAGs left out), as written: parsed once per text. */
async function targetsIn(definitions: Definitions, text: string): Promise<readonly string[]> {
  let kept = keptTargets.get(definitions);
  if (!kept) keptTargets.set(definitions, kept = new Map());
  const known = kept.get(text);
  if (known) return known;
  const parsed = await definitions.parse(text, {}).catch(() => undefined);
  if (!parsed) return [];
  const local = new Set(parsed.localDags.map((candidate) => candidate.name));
  const dags = [parsed.dag, ...parsed.localDags.map((candidate) => candidate.dag)].filter((dag): dag is Dag => dag !== undefined);
  const targets = [...new Set(dags.flatMap(targetsOf))].filter((target) => !local.has(target));
  if (kept.size >= KEPT_TARGETS) kept.delete(kept.keys().next().value!);
  kept.set(text, targets);
  return targets;
}

function targetsOf(dag: Dag): string[] {
  const steps = [...dag.steps, ...Object.values(dag.handlerOn)];
  return steps.flatMap((step) => {
    const target = step.call ?? (step.executor.type === 'dag' ? step.command : undefined);
    return target === undefined ? [] : [target.replace(/\.ya?ml$/, '')];
  });
}
