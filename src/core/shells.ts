// What a step's shell words say about how it takes a command.
import { basename } from 'node:path';

/** nix-shell takes its command with --run and installs a step's `shellPackages`. */
export function isNixShell(shell: readonly string[] | undefined): boolean {
  return shell !== undefined && shell.length > 0 && basename(shell[0]) === 'nix-shell';
}
