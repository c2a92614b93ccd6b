// A value is never shell code. A reference (${NAME}, $NAME, ${CONFIG.key}, ${NAME:0:4}, $1...) in
// code a POSIX shell runs is written as a reference the shell expands from the process's
// environment, where the value goes, instead of the value's text: a param or an output holding
// quotes, `;` or `$(...)` reaches the command as those characters, never as syntax. Secrets gain a
// second property from it: argv is readable by every user of the machine (`ps`), a process's
// environment only by its owner. Interpreters that are not POSIX shells cannot expand such
// references: they get the values, escaped for a double-quoted string where one encloses them.
import { ownValue } from '../../core/index.ts';
import { backtickParts, escapeForShell, expandShellCode, expandVariables, type ExpandScope } from '../../definition/index.ts';
import { isPosixShell, shellSegmentAt, shellSegments, type ShellSegment } from './shell-syntax.ts';

/** `$NAME` or `${NAME}`: a reference the shell can expand as it is, when NAME holds the same value. */
const PLAIN_REFERENCE = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/;

/** `${NAME:-fallback}`: the name, and the fallback as the definition wrote it. */
const FALLBACK_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+):-(.*)\}$/s;

/** The variable a reference reads: `TOKEN` of ${TOKEN:0:4}, `CONFIG` of ${CONFIG.key}, `1` of $1. */
const REFERENCED_NAME = /^\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9]+)/;

/** Variables made for references that are not a variable of their own (slices, JSON fields, $1...). */
const GENERATED_PREFIX = 'TROUPE_VALUE_';

/** The shell a command runs with when the definition sets none (as the shell executor does). */
export const DEFAULT_SHELL: readonly string[] = ['sh'];

/** A run's secret values and the shell that runs its commands: what expanding their references needs. */
export interface SecretScope {
  values: readonly string[];
  /** The definition's shell; DEFAULT_SHELL when it sets none. */
  shell?: readonly string[];
}

export const NO_SECRETS: SecretScope = { values: [] };

/** For the double-quoted string of another interpreter (Python, Node...): only the quote and the backslash. */
const escapeForString = (value: string) => value.replace(/[\\"]/g, '\\$&');

export class ShellReferences {
  /** What the process needs in its environment besides `exported`: the generated variables. */
  readonly env: Record<string, string> = {};
  private readonly generated = new Map<string, string>();

  /** `exported`: the environment the process gets. */
  constructor(private readonly secrets: readonly string[], private readonly exported: Record<string, string>) {}

  /** The process's environment: `exported` with the generated variables, if any. */
  environment(): Record<string, string> {
    return this.generated.size === 0 ? this.exported : { ...this.exported, ...this.env };
  }

  private carries(text: string): boolean {
    return this.secrets.some((secret) => text.includes(secret));
  }

  /**
   * Whether a reference reveals a secret, or a part of one: its value carries one, or the variable
   * it reads does (a slice of a secret is no less secret, and the masker would not see it).
   */
  private reveals(reference: string, value: string, scope: ExpandScope): boolean {
    if (this.carries(value)) return true;
    const name = REFERENCED_NAME.exec(reference)?.[1];
    const variable = name === undefined ? undefined : scope.get(name);
    return variable !== undefined && this.carries(variable);
  }

  /**
   * Shell code for `interpreter` with its references written for the shell to expand, or, for an
   * interpreter that is not a POSIX shell, expanded. `quoteRules`: written as in a step's command
   * (expandShellCode), else as in a value.
   */
  shellCode(code: string, scope: ExpandScope, interpreter: readonly string[], quoteRules = true): string {
    const posix = isPosixShell(interpreter);
    const expand = (text: string, references: ExpandScope) =>
      (quoteRules ? expandShellCode(text, references, posix ? escapeForShell : escapeForString) : expandVariables(text, references));
    if (!posix || !code.includes('$')) return expand(code, scope);
    const segmentAt = shellSegmentAt(shellSegments(code));
    return expand(code, { ...scope, write: (reference, value, at) => this.reference(reference, value, segmentAt(at), scope) });
  }

  private reference(written: string, value: string, segment: ShellSegment, scope: ExpandScope): string {
    if (segment.context === 'literal') return this.literal(written, value, segment, scope);
    const fallback = FALLBACK_REFERENCE.exec(written);
    if (fallback && segment.context !== 'single') {
      const current = scope.get(fallback[1]);
      // The fallback is the definition's code (`${DAY:-$(date +%F)}`): the shell runs it, its own references left to it too.
      if (current === undefined || current === '') return `\${${fallback[1]}:-${this.shellCode(fallback[2], scope, DEFAULT_SHELL, false)}}`;
      return `\${${this.variableFor(`\${${fallback[1]}}`, value)}}`;
    }
    const name = this.variableFor(written, value);
    // Single quotes do not expand: closed, the reference in double quotes, opened again.
    return segment.context === 'single' ? `'"\${${name}}"'` : `\${${name}}`;
  }

  /**
   * A comment or a quoted here-document never expands: a comment keeps the reference as written. A
   * here-document's body is written with the value, as Dagu writes it (another program may read
   * it), unless that could end the body early or put a secret into the code: then it too keeps the
   * reference as written.
   */
  private literal(written: string, value: string, segment: ShellSegment, scope: ExpandScope): string {
    if (segment.delimiter === undefined || /[\n\r]/.test(value) || value.includes(segment.delimiter)) return written;
    return this.reveals(written, value, scope) ? written : value;
  }

  private variableFor(written: string, value: string): string {
    const plain = PLAIN_REFERENCE.exec(written);
    const name = plain?.[1] ?? plain?.[2];
    if (name !== undefined && ownValue(this.exported, name) === value) return name;
    let generated = this.generated.get(value);
    if (generated === undefined) {
      // A name of the exported environment (the server's TROUPE_* variables pass through) is not reused.
      let counter = this.generated.size;
      do generated = `${GENERATED_PREFIX}${++counter}`; while (ownValue(this.exported, generated) !== undefined || Object.hasOwn(this.env, generated));
      this.generated.set(value, generated);
      this.env[generated] = value;
    }
    return generated;
  }
}

export type RunCommand = (command: string, env: Record<string, string>) => Promise<string>;

/**
 * `template` with its references expanded and its backtick commands run by `run` and replaced by
 * their output. The commands are those the template holds, never ones a value brings, and their
 * references are written for the shell (ShellReferences.shellCode, without the quote rules).
 */
export async function expandRunningCommands(template: string, scope: Record<string, string>, secrets: SecretScope, run: RunCommand, step?: ExpandScope['step']): Promise<string> {
  const lookup: ExpandScope = { get: (name: string) => ownValue(scope, name), ...(step ? { step } : {}) };
  const parts = backtickParts(template);
  if (!parts.some((part) => 'command' in part)) return expandVariables(template, lookup);
  let text = '';
  for (const part of parts) {
    if ('literal' in part) {
      text += expandVariables(part.literal, lookup);
    } else {
      const references = new ShellReferences(secrets.values, scope);
      text += await run(references.shellCode(part.command, lookup, secrets.shell ?? DEFAULT_SHELL, false), references.environment());
    }
  }
  return text;
}
