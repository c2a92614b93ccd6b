// The troupe command run as a user runs it, in a child process: its output, its exit code. Tests of
// the command's verbs (test/cli-*.test.ts) use it; a home of their own holds their DAGs.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from './cli-process.ts';

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment of a run of the command: nothing of the user's troupe settings leaks in. */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TROUPE_')));
  return { ...base, ...env };
}

export function troupeChild(args: string[], env: Record<string, string> = {}): { child: ChildProcess; outcome: Promise<Outcome>; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => { stdout += chunk; });
  child.stderr!.on('data', (chunk) => { stderr += chunk; });
  const outcome = new Promise<Outcome>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return { child, outcome, output: () => stdout + stderr };
}

/** Runs `troupe <args>` to its end. */
export function troupe(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  return troupeChild(args, env).outcome;
}

export interface Home {
  dir: string;
  /** `--home <dir>`, to append to a verb's arguments. */
  flag: string[];
  writeDag(name: string, spec: string): Promise<void>;
  remove(): Promise<void>;
}

export async function makeHome(dags: Record<string, string> = {}): Promise<Home> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
  await mkdir(join(dir, 'dags'), { recursive: true });
  const writeDag = (name: string, spec: string) => writeFile(join(dir, 'dags', `${name}.yaml`), spec);
  for (const [name, spec] of Object.entries(dags)) await writeDag(name, spec);
  return { dir, flag: ['--home', dir], writeDag, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Two steps that succeed. */
export const PASSES = 'steps:\n  - name: first\n    command: echo one\n  - name: second\n    command: echo two\n    depends: first\n';
/** A step that succeeds, then one that fails with exit code 3. */
export const FAILS = 'params:\n  - NAME: world\nsteps:\n  - name: greet\n    command: echo hello ${NAME}\n  - name: break\n    command: sh -c "exit 3"\n    depends: greet\n';
/** One step that waits until it is stopped. */
export const WAITS = 'steps:\n  - name: wait\n    command: sleep 60\n';
