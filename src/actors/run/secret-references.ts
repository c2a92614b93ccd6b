// Secret values stay off command lines and out of script files. A reference (${TOKEN},
// ${TOKEN:0:4}, ${CONFIG.key}, $1...) whose value carries a secret is written into shell code as a
// reference the shell expands from the process's environment, where the value goes instead: argv
// is readable by every user of the machine (`ps`), a process's environment only by its owner.
// Interpreters that are not POSIX shells cannot expand such references: they get the values.
import { ownValue } from '../../core/index.ts';
import { backtickCommands, backtickParts, escapeForShell, expandShellCode, expandVariables, substituteBackticks, type ExpandScope } from '../../definition/index.ts';
import { isPosixShell, shellContextAt, shellSegments, type ShellContext } from './shell-syntax.ts';

/** `$NAME` or `${NAME}`: a reference the shell can expand as it is, when NAME holds the same value. */
const PLAIN_REFERENCE = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/;

/** The variable a reference reads: `TOKEN` of ${TOKEN:0:4}, `CONFIG` of ${CONFIG.key}, `1` of $1. */
const REFERENCED_NAME = /^\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9]+)/;

/** Variables made for references that are not a variable of their own (slices, JSON fields, $1). */
const GENERATED_PREFIX = 'TROUPE_SECRET_';

/** The shell a command runs with when the definition sets none (as the shell executor does). */
export const DEFAULT_SHELL: readonly string[] = ['sh'];

/** A run's secret values and the shell that runs its commands: what secret-aware expansion needs. */
export interface SecretScope {
  values: readonly string[];
  /** The definition's shell; DEFAULT_SHELL when it sets none. */
  shell?: readonly string[];
}

export const NO_SECRETS: SecretScope = { values: [] };

/** For the double-quoted string of another interpreter (Python, Node...): only the quote and the backslash. */
const escapeForString = (value: string) => value.replace(/[\\"]/g, '\\$&');

export class SecretReferences {
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

  /** Whether any reference in `text` reveals a secret. */
  revealedIn(text: string, scope: ExpandScope): boolean {
    let revealed = false;
    if (this.secrets.length > 0) {
      expandVariables(text, { ...scope, write: (reference, value) => {
        revealed ||= this.reveals(reference, value, scope);
        return undefined;
      } });
    }
    return revealed;
  }

  /**
   * Shell code for `interpreter` with its references expanded, those revealing a secret left to the
   * shell. `quoteRules`: written as in a step's command (expandShellCode), else as in a value.
   */
  shellCode(code: string, scope: ExpandScope, interpreter: readonly string[], quoteRules = true): string {
    const posix = isPosixShell(interpreter);
    const expand = (text: string, references: ExpandScope) =>
      (quoteRules ? expandShellCode(text, references, posix ? escapeForShell : escapeForString) : expandVariables(text, references));
    if (this.secrets.length === 0 || !posix) return expand(code, scope);
    const contextAt = shellContextAt(shellSegments(code));
    return expand(code, {
      ...scope,
      write: (reference, value, at) => (this.reveals(reference, value, scope) ? this.reference(reference, value, contextAt(at)) : undefined),
    });
  }

  private reference(written: string, value: string, context: ShellContext): string {
    // A comment or a quoted here-document never expands: the reference stays as it was written.
    if (context === 'literal') return written;
    const name = this.variableFor(written, value);
    // Single quotes do not expand: closed, the reference in double quotes, opened again.
    return context === 'single' ? `'"\${${name}}"'` : `\${${name}}`;
  }

  private variableFor(written: string, value: string): string {
    const plain = PLAIN_REFERENCE.exec(written);
    const name = plain?.[1] ?? plain?.[2];
    if (name !== undefined && ownValue(this.exported, name) === value) return name;
    let generated = this.generated.get(value);
    if (generated === undefined) {
      generated = `${GENERATED_PREFIX}${this.generated.size + 1}`;
      this.generated.set(value, generated);
      this.env[generated] = value;
    }
    return generated;
  }
}

export type RunCommand = (command: string, env: Record<string, string>) => Promise<string>;

/**
 * `template` with its references expanded and its backtick commands run by `run` and replaced by
 * their output. When a value it references carries a secret, the commands are expanded as shell
 * code instead (that secret reaches them through their environment) and the text around them as usual.
 */
export async function expandRunningCommands(template: string, scope: Record<string, string>, secrets: SecretScope, run: RunCommand): Promise<string> {
  const lookup = (name: string) => ownValue(scope, name);
  const expanded = expandVariables(template, lookup);
  const commands = backtickCommands(expanded);
  if (commands.length === 0) return expanded;
  const references = new SecretReferences(secrets.values, scope);
  if (!references.revealedIn(template, { get: lookup })) return runBackticks(expanded, commands, scope, run);
  let text = '';
  for (const part of backtickParts(template)) {
    if ('literal' in part) text += expandVariables(part.literal, lookup);
    else text += await run(references.shellCode(part.command, { get: lookup }, secrets.shell ?? DEFAULT_SHELL, false), references.environment());
  }
  return text;
}

/** `text` with its backtick `commands` (backtickCommands) run in order and replaced by their output. */
export async function runBackticks(text: string, commands: readonly string[], env: Record<string, string>, run: RunCommand): Promise<string> {
  const outputs: string[] = [];
  for (const command of commands) outputs.push(await run(command, env));
  return substituteBackticks(text, outputs);
}
