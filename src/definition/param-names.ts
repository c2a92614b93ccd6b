// Which names a param may have. A named param becomes an environment variable of every step, and
// whoever may start a run chooses params: a name that steers the shell, the dynamic loader or an
// interpreter (BASH_ENV, LD_PRELOAD, NODE_OPTIONS...) would let them run code of their choosing in
// a DAG written by someone else, and one of troupe's or Dagu's own names would pass for a
// built-in. The definition's `env:` is its author's and is not checked here.
import { AppError } from '../core/index.ts';

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Names read, by exact case, by a shell, the loader or an interpreter: each can make a program run other code. */
const RESERVED_NAMES = new Set([
  // POSIX shells and bash: startup files, the command search, word splitting, prompts and traces.
  'PATH', 'HOME', 'IFS', 'ENV', 'SHELL', 'SHELLOPTS', 'BASHOPTS', 'CDPATH', 'GLOBIGNORE', 'EXECIGNORE',
  'PS1', 'PS2', 'PS3', 'PS4', 'PROMPT_COMMAND', 'FPATH', 'ZDOTDIR', 'INPUTRC', 'PWD', 'OLDPWD', 'TMPDIR',
  // Config files that name programs to run (git's core.pager and hooks, ssh's ProxyCommand...).
  'XDG_CONFIG_HOME',
  // The C library and loaders.
  'GCONV_PATH', 'GLIBC_TUNABLES', 'HOSTALIASES', 'LOCPATH', 'NLSPATH', 'OPENSSL_CONF', 'OPENSSL_ENGINES',
  // Interpreters' startup options and module paths.
  'RUBYOPT', 'RUBYLIB', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH', 'PHPRC',
  'PHP_INI_SCAN_DIR', 'TCLLIBPATH', 'DOTNET_STARTUP_HOOKS', 'R_PROFILE', 'R_PROFILE_USER',
  // Programs that other programs start.
  'PAGER', 'EDITOR', 'VISUAL', 'BROWSER', 'LESSOPEN', 'LESSCLOSE', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'MANPAGER',
]);

/** Families of such names, and troupe's and Dagu's own (DAG_RUN_ID and the other built-ins). */
const RESERVED_PREFIXES = [
  'BASH_', 'LD_', 'DYLD_', 'PYTHON', 'NODE_', 'PERL', 'LUA_', 'GIT_', 'npm_config_', 'NPM_CONFIG_',
  'TROUPE_', 'DAG_', 'DAGU_',
];

const MAX_LISTED = 10;
const NOT_A_VARIABLE = 'not a variable name (letters, digits and underscores, not starting with a digit)';
const RESERVED = 'reserved (a name that steers a shell, the dynamic loader or an interpreter, or one of troupe\'s and Dagu\'s own: TROUPE_*, DAG_*, DAGU_*)';

/** Why a named param may not have this name; undefined when it may. */
export function paramNameProblem(name: string): string | undefined {
  if (!VARIABLE_NAME.test(name)) return NOT_A_VARIABLE;
  if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix))) return RESERVED;
  return undefined;
}

/** What is wrong with these param names, every refused one named; undefined when nothing is. */
export function paramNamesProblem(names: Iterable<string | undefined>): string | undefined {
  const refused = new Map<string, string[]>();
  for (const name of names) {
    const problem = name === undefined ? undefined : paramNameProblem(name);
    if (!problem) continue;
    const list = refused.get(problem) ?? [];
    list.push(shown(name!));
    refused.set(problem, list);
  }
  if (refused.size === 0) return undefined;
  return [...refused].map(([problem, list]) => `${listed(list)}: ${problem}`).join('; ');
}

/** Refuses (400 bad_request) params whose names paramNameProblem refuses, naming them all. */
export function refuseParamNames(names: Iterable<string | undefined>): void {
  const problem = paramNamesProblem(names);
  if (problem) throw new AppError('bad_request', `params refused: ${problem}`);
}

function listed(names: string[]): string {
  return names.length <= MAX_LISTED ? names.join(', ') : `${names.slice(0, MAX_LISTED).join(', ')} and ${names.length - MAX_LISTED} more`;
}

/** A name as an error message quotes it: a name of any length or character must not flood it. */
function shown(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name);
}
