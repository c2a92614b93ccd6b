// A step's `dir` that names variables (`${BASE}/out`, `$HOME/x`) or the home (`~`, `~/x`): kept as
// written at parse time, and expanded as the step starts, with the variables its command sees,
// then resolved against the DAG's working directory, as Dagu does.
import { homedir } from 'node:os';
import { posix as path } from 'node:path';
import { expandVariables } from './expand.ts';

/** Whether the text is expanded as its step starts, rather than resolved as it is parsed. */
export function isExpandedDir(text: string): boolean {
  return text.includes('$') || text === '~' || text.startsWith('~/');
}

/** The directory `text` names with `env`'s variables, `~` as HOME; a relative result is under `base`. */
export function expandedDir(text: string, base: string, env: Readonly<Record<string, string>>): string {
  let dir = expandVariables(text, (name) => (Object.hasOwn(env, name) ? env[name] : undefined));
  if (dir === '~' || dir.startsWith('~/')) dir = (Object.hasOwn(env, 'HOME') ? env.HOME : homedir()) + dir.slice(1);
  return path.resolve(base, dir);
}
