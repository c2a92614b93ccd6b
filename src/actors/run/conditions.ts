// Preconditions (definition format: preconditions): each holds or the step is skipped (the run, at DAG level, is
// aborted). A command must exit 0; a condition is expanded (variables, then backtick commands on the
// pool) and compared with `expected` (`re:` for a regular expression), or, without `expected`, run
// as a command. `negate` inverts the outcome.
import { ownValue, type Condition, type Dag, type StepDispatcher } from '../../core/index.ts';
import { expandVariables, type ExpandScope } from '../../definition/index.ts';
import { matches } from './continue-on.ts';
import { maskText } from './masking.ts';
import { DEFAULT_SHELL, expandRunningCommands, NO_SECRETS, ShellReferences, type SecretScope } from './shell-references.ts';
import type { RunPlan, StepResultRef } from './plan.ts';
import { commandProbe, type ProbeCommand } from './substitution.ts';

export type Verdict = { holds: true } | { holds: false; message: string };

/**
 * The first condition that does not hold decides; all hold: the step or run goes on. The message
 * names the condition with its values, the secrets among them masked. `env`: what references name,
 * positional params under "1", "2"... (commands get only the names a process environment can hold).
 */
export async function checkConditions(conditions: Condition[], env: Record<string, string>, probe: ProbeCommand, secrets: SecretScope = NO_SECRETS, steps?: Readonly<Record<string, StepResultRef>>): Promise<Verdict> {
  for (const condition of conditions) {
    const verdict = await checkCondition(condition, env, probe, secrets, steps);
    if (!verdict.holds) return { holds: false, message: maskText(verdict.message, secrets.values) };
  }
  return { holds: true };
}

/** The DAG's preconditions, checked on the pool with the run's variables: why the first that fails does. */
export async function unmetDagPrecondition(dag: Dag, plan: RunPlan, dispatcher: StepDispatcher): Promise<string | undefined> {
  if (dag.preconditions.length === 0) return undefined;
  const probe = commandProbe(dispatcher, dag.workingDir, dag.shell, dag.maxOutputSize);
  const verdict = await checkConditions(dag.preconditions, { ...plan.baseEnv, ...plan.positional }, probe, { values: plan.secrets, shell: dag.shell });
  return verdict.holds ? undefined : verdict.message;
}

async function checkCondition(condition: Condition, env: Record<string, string>, probe: ProbeCommand, secrets: SecretScope, steps?: Readonly<Record<string, StepResultRef>>): Promise<Verdict> {
  const lookup = (name: string) => ownValue(env, name);
  // ${id.exitCode}, ${id.stdout}, ${id.stderr}: the steps before this one, as commands read them.
  const scope: ExpandScope = { get: lookup, step: (id) => (steps && Object.hasOwn(steps, id) ? steps[id] : undefined) };
  const expand = (text: string) => expandVariables(text, scope);
  let holds: boolean;
  let detail: string;
  if (condition.command !== undefined || condition.expected === undefined) {
    const references = new ShellReferences(secrets.values, env);
    const command = references.shellCode(condition.command ?? condition.condition ?? '', scope, secrets.shell ?? DEFAULT_SHELL);
    const result = await probe(command, references.environment());
    holds = result.kind === 'ok' && result.exitCode === 0 && !result.error;
    detail = `\`${command}\` ${result.kind === 'ok' ? `exited with ${result.exitCode}` : `could not run: ${result.kind === 'error' ? result.message : ''}`}`;
  } else {
    // A command that fails yields its output anyway.
    const value = await expandRunningCommands(condition.condition ?? '', env, secrets, async (command, commandEnv) => {
      const result = await probe(command, commandEnv);
      return result.kind === 'ok' ? result.output ?? '' : '';
    }, scope.step);
    const expected = expand(condition.expected);
    holds = expected.startsWith('re:') ? matches(expected, value) : value === expected;
    detail = `"${condition.condition}" is "${value}", expected "${expected}"`;
  }
  if (condition.negate) holds = !holds;
  if (holds) return { holds: true };
  return { holds: false, message: condition.error ?? `precondition not met: ${detail}${condition.negate ? ' (negated)' : ''}` };
}
