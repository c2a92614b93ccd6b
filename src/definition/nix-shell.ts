// Steps whose `shellPackages` nix-shell installs: `shell: nix-shell` runs each such step as
// `nix-shell [args] -p <package>... --pure --run <command>`, as Dagu does. Without nix-shell on the
// server's PATH such a step cannot run, and its DAG says so rather than running without them.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The shell words that install `packages`: Dagu's `--pure` unless the words say `--pure` or `--impure`. */
export function nixShellWords(shell: readonly string[], packages: readonly string[]): string[] {
  const words = [...shell, ...packages.flatMap((name) => ['-p', name])];
  return shell.includes('--pure') || shell.includes('--impure') ? words : [...words, '--pure'];
}

let found: { path: string; at: number; answer: boolean } | undefined;

/** Whether `program` (nix-shell, or a path to it) can be started: looked up on PATH, remembered for 10 s. */
export function nixShellFound(program: string, path = process.env.PATH ?? ''): boolean {
  const key = `${program}\0${path}`;
  if (found && found.path === key && Date.now() - found.at < 10_000) return found.answer;
  const candidates = program.includes('/') ? [program] : path.split(delimiter).filter(Boolean).map((dir) => join(dir, program));
  const answer = candidates.some((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  found = { path: key, at: Date.now(), answer };
  return answer;
}
