// What the command says when it cannot do what it was asked: one line naming the problem and the
// fix, and an exit code a script can branch on (2: the command line was wrong, 1: the rest).
import { AppError } from '../core/index.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** The command line itself is wrong: a missing argument, an unknown flag, a bad value. */
export class UsageError extends Error {
  constructor(problem: string, readonly verb?: string) {
    super(problem);
  }
}

/** Something the user can fix failed: `fix` says how. */
export class CliError extends Error {
  constructor(problem: string, readonly fix?: string) {
    super(problem);
  }
}

/** The one line printed for an error, and the exit code that goes with it. */
export function describeError(error: unknown): { line: string; code: number } {
  if (error instanceof UsageError) {
    const help = error.verb ? `troupe help ${error.verb}` : 'troupe help';
    return { line: `troupe: ${error.message} (see \`${help}\`)`, code: EXIT_USAGE };
  }
  if (error instanceof CliError) return { line: `troupe: ${oneLine(error.message)}${error.fix ? `: ${error.fix}` : ''}`, code: EXIT_FAILED };
  if (error instanceof AppError) return { line: `troupe: ${oneLine(error.message)}${fixFor(error.code, error.message)}`, code: EXIT_FAILED };
  const text = error instanceof Error ? error.message : String(error);
  return { line: `troupe: ${oneLine(text)}`, code: EXIT_FAILED };
}

function fixFor(code: string, message: string): string {
  switch (code) {
    case 'not_found':
      return /dag-run/i.test(message)
        ? ': check the DAG name and the run id (`troupe status` lists the recent runs)'
        : ': check the name (the DAGs folder is --dags, or HOME/dags), or give the path of a YAML file';
    case 'already_running': return ': wait for it to end, or `troupe stop` it';
    case 'not_running': return ': nothing to stop';
    case 'unauthorized': return ': pass --token or set TROUPE_TOKEN';
    case 'forbidden': return ': use a token allowed to do this';
    default: return '';
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, '; ').trim();
}
