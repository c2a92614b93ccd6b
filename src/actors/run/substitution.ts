// Evaluation at run start: DAG env values, then param defaults, get their references expanded and
// their backtick `command`s replaced by the commands' trimmed output. The commands run as tasks on
// the pool, with the variables defined so far; a command that fails refuses the run, naming it.
import { AppError, setOwn, type ParamDef, type StepDispatcher, type StepResult } from '../../core/index.ts';
import { mergeParams } from '../../definition/index.ts';
import { expandRunningCommands, NO_SECRETS, type RunCommand, type SecretScope } from './shell-references.ts';

export type { RunCommand };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Runs a command on the pool for its exit code and trimmed stdout: no log files. */
export type ProbeCommand = (command: string, env: Record<string, string>) => Promise<StepResult>;

export function commandProbe(dispatcher: StepDispatcher, workingDir: string, shell: string[] | undefined, maxOutputSize: number): ProbeCommand {
  return (command, env) => dispatcher.dispatch({
    executor: { type: 'shell', config: {} }, shell, command, scriptPath: '', env: exportable(env), workingDir,
    captureOutput: true, maxOutputSize, secrets: [],
  }).result;
}

/** A substitution runner on the pool: the command's output, or an error naming it. */
export function commandRunner(dispatcher: StepDispatcher, workingDir: string, shell: string[] | undefined, maxOutputSize: number): RunCommand {
  const probe = commandProbe(dispatcher, workingDir, shell, maxOutputSize);
  return async (command, env) => {
    const result = await probe(command, env);
    if (result.kind !== 'ok') throw new AppError('bad_request', `command \`${command}\` could not run: ${result.message}`);
    if (result.exitCode !== 0 || result.error) throw new AppError('bad_request', `command \`${command}\` failed: ${result.error ?? `exit status ${result.exitCode}`}`);
    return result.output ?? '';
  };
}

/** Like evaluateEnv, running the backtick commands of each value in order (secrets: shell-references.ts). */
export async function evaluateEnvWithCommands(
  entries: Array<[string, string]>,
  base: Record<string, string>,
  run: RunCommand,
  secrets: SecretScope = NO_SECRETS,
): Promise<Record<string, string>> {
  const scope = { ...base };
  const result: Record<string, string> = {};
  for (const [key, template] of entries) {
    const value = await expandRunningCommands(template, scope, secrets, naming(run, `env ${key}`));
    setOwn(scope, key, value);
    setOwn(result, key, value);
  }
  return result;
}

/**
 * The definition's param defaults evaluated like env values: references to `scope` (the DAG's env,
 * dotenv, system variables, built-ins) and to the earlier params, then backtick commands. Only the
 * defaults: a request's values are never evaluated, and later defaults see the earlier defaults, as
 * in Dagu.
 */
export async function paramDefaultsWithCommands(params: ParamDef[], scope: Record<string, string>, run: RunCommand, secrets: SecretScope = NO_SECRETS): Promise<ParamDef[]> {
  const known = { ...scope };
  const out: ParamDef[] = [];
  let position = 0;
  for (const param of params) {
    const value = await expandRunningCommands(param.value, known, secrets, naming(run, `param ${param.name ?? param.value}`));
    setOwn(known, param.name ?? String(++position), value);
    out.push({ ...param, value });
  }
  return out;
}

/** How a run's params are made from what the defaults see (paramDefaultsWithCommands). */
export type StartingParams = (scope: Record<string, string>, run: RunCommand, secrets: SecretScope) => Promise<ParamDef[]>;

/** A start's params: the definition's defaults evaluated, the request's values on top as they are. */
export function startingParams(defaults: ParamDef[], requested: ParamDef[]): StartingParams {
  return async (scope, run, secrets) => mergeParams(await paramDefaultsWithCommands(defaults, scope, run, secrets), requested);
}

/** `run` with its errors naming what the command computes. */
function naming(run: RunCommand, what: string): RunCommand {
  return (command, env) => run(command, env).catch((error: Error) => {
    throw new AppError('bad_request', `${what}: ${error.message}`);
  });
}

function exportable(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([key]) => ENV_NAME.test(key)));
}
