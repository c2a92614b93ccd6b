// Preconditions (workflow-format 2.6): each holds or the step is skipped (the run, at DAG level, is
// aborted). A command must exit 0; a condition is expanded (variables, then backtick commands on the
// pool) and compared with `expected` (`re:` for a regular expression), or, without `expected`, run
// as a command. `negate` inverts the outcome.
import { ownValue, type Condition } from '../../core/index.ts';
import { backtickCommands, expandVariables, substituteBackticks } from '../../spec/index.ts';
import { matches } from './continue-on.ts';
import type { ProbeCommand } from './substitution.ts';

export type Verdict = { holds: true } | { holds: false; message: string };

/** The first condition that does not hold decides; all hold: the step or run goes on. */
export async function checkConditions(conditions: Condition[], env: Record<string, string>, probe: ProbeCommand): Promise<Verdict> {
  for (const condition of conditions) {
    const verdict = await checkCondition(condition, env, probe);
    if (!verdict.holds) return verdict;
  }
  return { holds: true };
}

async function checkCondition(condition: Condition, env: Record<string, string>, probe: ProbeCommand): Promise<Verdict> {
  const expand = (text: string) => expandVariables(text, (name) => ownValue(env, name));
  let holds: boolean;
  let detail: string;
  if (condition.command !== undefined || condition.expected === undefined) {
    const command = expand(condition.command ?? condition.condition ?? '');
    const result = await probe(command, env);
    holds = result.kind === 'ok' && result.exitCode === 0 && !result.error;
    detail = `\`${command}\` ${result.kind === 'ok' ? `exited with ${result.exitCode}` : `could not run: ${result.kind === 'error' ? result.message : ''}`}`;
  } else {
    const value = await substitute(expand(condition.condition ?? ''), env, probe);
    const expected = expand(condition.expected);
    holds = expected.startsWith('re:') ? matches(expected, value) : value === expected;
    detail = `"${condition.condition}" is "${value}", expected "${expected}"`;
  }
  if (condition.negate) holds = !holds;
  if (holds) return { holds: true };
  return { holds: false, message: condition.error ?? `precondition not met: ${detail}${condition.negate ? ' (negated)' : ''}` };
}

/** Backtick commands in a condition, run on the pool; a command that fails yields its output anyway. */
async function substitute(text: string, env: Record<string, string>, probe: ProbeCommand): Promise<string> {
  const commands = backtickCommands(text);
  if (commands.length === 0) return text;
  const outputs: string[] = [];
  for (const command of commands) {
    const result = await probe(command, env);
    outputs.push(result.kind === 'ok' ? result.output ?? '' : '');
  }
  return substituteBackticks(text, outputs);
}
