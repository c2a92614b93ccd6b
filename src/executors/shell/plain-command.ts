// A command line the default shell would only split into words and run (`sleep 0.2`,
// `python3 job.py --day=2026-11-28`) is started without the shell: `sh -c` forks once more and
// waits for its child, so such a step costs two process starts where one does the same work.
// Anything the shell would interpret (quotes, variables, globs, operators, redirections, comments,
// assignments, its builtins and keywords) still goes through it; so does a command that cannot be
// started directly (not found, not executable, a script without `#!`): the shell then says why,
// exactly as it would have. The one thing `sh` adds to a command's environment, PWD, is added here
// the way dash does it.
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/** The first word: a command name or path, nothing the shell expands, and no assignment. */
const COMMAND_WORD = /^[A-Za-z0-9_./:,+@%-]+$/;
/** Further words may also hold `=` (`--day=2026-11-28`), which the shell leaves alone there. */
const ARGUMENT_WORD = /^[A-Za-z0-9_./:,+@%=-]+$/;

/**
 * dash's builtins and reserved words, and bash's (where `sh` is bash): the shell runs these itself,
 * not a program of that name (`echo`, `time` and `kill` are also programs that behave otherwise).
 */
const SHELL_WORDS = new Set([
  '.', ':', '[', 'alias', 'bg', 'break', 'cd', 'chdir', 'command', 'continue', 'echo', 'eval', 'exec', 'exit',
  'export', 'false', 'fc', 'fg', 'getopts', 'hash', 'jobs', 'kill', 'local', 'printf', 'pwd', 'read', 'readonly',
  'return', 'set', 'shift', 'test', 'times', 'trap', 'true', 'type', 'ulimit', 'umask', 'unalias', 'unset', 'wait',
  '!', 'case', 'do', 'done', 'elif', 'else', 'esac', 'fi', 'for', 'if', 'in', 'then', 'until', 'while', '{', '}',
  '[[', ']]', 'builtin', 'caller', 'compgen', 'complete', 'compopt', 'coproc', 'declare', 'dirs', 'disown', 'enable',
  'function', 'help', 'history', 'let', 'logout', 'mapfile', 'popd', 'pushd', 'readarray', 'select', 'shopt',
  'source', 'suspend', 'time', 'typeset',
]);

/** The words of `command` when the shell would do nothing but split it on blanks and run it; else undefined. */
export function plainCommand(command: string): string[] | undefined {
  const words = command.split(/[ \t]+/).filter((word) => word !== '');
  const [first, ...rest] = words;
  if (first === undefined || !COMMAND_WORD.test(first) || SHELL_WORDS.has(first)) return undefined;
  return rest.every((word) => ARGUMENT_WORD.test(word)) ? words : undefined;
}

/**
 * `env` with PWD as dash would export it to its command: the inherited PWD when it names the
 * working directory, else the directory's physical path.
 */
export function withShellPwd(env: Record<string, string>, cwd: string): Record<string, string> {
  const inherited = env.PWD;
  if (inherited !== undefined && isAbsolute(inherited) && sameDirectory(inherited, cwd)) return env;
  try {
    return { ...env, PWD: realpathSync(cwd) };
  } catch {
    return env;
  }
}

function sameDirectory(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}
