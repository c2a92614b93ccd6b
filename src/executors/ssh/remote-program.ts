// What a step sends to the remote host: a short exec command that starts the shell, and the program
// that shell reads on its standard input (the step's env, then its command, commands or script).
// The env travels inside the program, not as `setenv` requests (sshd refuses those unless AcceptEnv
// lists each name) and not on the exec command line (where the remote process table would show
// secrets). Pure.
import { randomBytes } from 'node:crypto';
import type { StepTask } from '../../core/index.ts';
import { shebangLine } from '../shebang.ts';

export interface RemoteProgram {
  /** The exec request's command line, run by the remote user's login shell. */
  command: string;
  /** Read by the shell that `command` starts. */
  stdin: string;
}

const DEFAULT_SHELL = ['sh'];

/**
 * The server's own variables (what filterSystemEnv lets through) describe this machine: they are not
 * exported unless the DAG gave them another value. Everything else the step sees is.
 */
const LOCAL_NAMES = new Set(['PATH', 'HOME', 'SHELL', 'LANG', 'TZ']);
const LOCAL_PREFIXES = ['LC_', 'TROUPE_'];

export function remoteProgram(task: Pick<StepTask, 'shell' | 'command' | 'commands' | 'script' | 'env'>, serverEnv: Record<string, string | undefined>): RemoteProgram {
  const shell = task.shell ?? DEFAULT_SHELL;
  const exports = Object.entries(task.env)
    .filter(([name, value]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !(isLocal(name) && serverEnv[name] === value))
    .map(([name, value]) => `export ${name}=${quote(value)}\n`)
    .join('');
  // `:` keeps an empty function valid shell.
  const step = `__troupe_step() {\n${exports}${body(task) || ':\n'}}\n`;
  return { command: `exec ${shell.map(quote).join(' ')}`, stdin: step + SUPERVISOR };
}

/**
 * Runs the step and, beside it, a watcher of the channel's stdin: each line sent later names a
 * signal for the step's process group (stopLine), and the end of input (the connection lost) sends
 * SIGHUP, as a terminal's hangup would. sshd's own signal requests are not used: OpenSSH refuses
 * them for a root login ("session signalling requires privilege separation").
 * Everything is inside functions, so the shell has read the whole program before any of it runs, and
 * the watcher alone reads what follows. The step runs in the session's shell itself, as in `sh -c`
 * locally (its traps and exit status are that shell's), reading /dev/null; the EXIT trap ends the
 * watcher however the step exits.
 */
const SUPERVISOR = [
  '__troupe_watch() {',
  // It outlives the stop signals it sends, so that SIGKILL still follows a step that traps them.
  "  trap '' HUP INT QUIT TERM USR1 USR2 ALRM",
  '  while IFS= read -r __troupe_signal; do kill -s "$__troupe_signal" 0; done',
  '  kill -s HUP 0',
  '}',
  '__troupe_main() {',
  '  __troupe_watch <&3 >/dev/null 2>&1 &',
  '  __troupe_watcher=$!',
  '  exec 3<&-',
  `  trap 'kill -s KILL "$__troupe_watcher" 2>/dev/null' EXIT`,
  '  __troupe_step </dev/null',
  '  exit $?',
  '}',
  // An asynchronous command of a non-interactive shell reads /dev/null unless told otherwise: the
  // watcher gets the channel through fd 3.
  'exec 3<&0',
  '__troupe_main',
  '',
].join('\n');

/** The line that makes the watcher send `signal` (SIGTERM, TERM...) to the step's process group. */
export function stopLine(signal: string): string | undefined {
  const name = signal.toUpperCase().replace(/^SIG/, '');
  return /^[A-Z0-9]+$/.test(name) ? `${name}\n` : undefined;
}

function body(task: Pick<StepTask, 'shell' | 'command' | 'commands' | 'script'>): string {
  if (task.script !== undefined) {
    // As for a local step: `command` names the program that reads the script, else its shebang
    // does unless the step set a shell. The program reads it on stdin from a here-document.
    const reader = task.command ?? shebangLine(task);
    if (reader === undefined || reader === '') return lines(task.script);
    const delimiter = hereDocDelimiter(task.script);
    return `${reader} <<'${delimiter}'\n${lines(task.script)}${delimiter}\n`;
  }
  if (task.commands !== undefined) {
    // Each line in a subshell of its own (no state carries over, as locally); the first failure ends the step.
    return task.commands.map((line) => `(\n${lines(line)}) || exit $?\n`).join('');
  }
  return lines(task.command ?? '');
}

function lines(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

function hereDocDelimiter(script: string): string {
  for (;;) {
    const delimiter = `TROUPE_SCRIPT_${randomBytes(6).toString('hex')}`;
    if (!script.includes(delimiter)) return delimiter;
  }
}

function isLocal(name: string): boolean {
  return LOCAL_NAMES.has(name) || LOCAL_PREFIXES.some((prefix) => name.startsWith(prefix));
}

export function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
