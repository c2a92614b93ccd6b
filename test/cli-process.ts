// `troupe start-all` as a user runs it, in a child process: the tests of the command, of a crash
// and of the home lock start it this way.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const cli = resolve(import.meta.dirname, '..', 'src', 'cli', 'main.ts');

export interface CliServer {
  child: ChildProcess;
  /** The API's base URL, as the server printed it. */
  base: string;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
}

/**
 * Starts `troupe start-all` with `args`; resolves once it says where it listens. `detached`: in a
 * process group of its own, so that a test can kill the whole group.
 */
export function startCli(args: string[], env: Record<string, string> = {}, options: { detached?: boolean } = {}): Promise<CliServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'start-all', ...args], {
    env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached === true,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => { output += chunk; });
  child.stderr!.on('data', (chunk) => { output += chunk; });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`troupe did not start: ${output}`)), 30_000);
    child.stdout!.on('data', () => {
      const match = /listening on (https?:\/\/[^ ]+\/api\/v2)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolvePromise({ child, base: match[1], output: () => output });
      }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`troupe exited with ${code}: ${output}`)); });
  });
}

/** Resolves with the exit code (null after a signal) once the process has ended. */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolvePromise) => {
    if (child.exitCode !== null || child.signalCode !== null) resolvePromise(child.exitCode);
    else child.once('exit', (code) => resolvePromise(code));
  });
}
