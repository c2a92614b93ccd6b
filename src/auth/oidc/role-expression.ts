// roleAttributePath: a jq expression over a sign-in's claims, as Dagu reads it (gojq there). Here
// jq itself runs it, on the jq thread of the executors (jq compiled to WebAssembly), which the
// composition root hands in: a thread of its own, so an expression that loops is stopped after a
// time limit and never holds the server's thread.
import { AppError } from '../../core/index.ts';

/** One jq program over one JSON text (the executors' JqRunner has this shape). */
export interface JqRunner {
  run(request: { input: string; filter: string; raw: boolean }): {
    outcome: Promise<{ kind: 'ok'; stdout: string } | { kind: 'error'; message: string } | { kind: 'stopped' }>;
    stop(): void;
  };
}

/** How long an evaluation may take: claims are small, so one that runs longer loops. */
export const EXPRESSION_TIME_LIMIT_MS = 2_000;

export type ExpressionResult = { kind: 'value'; value: unknown } | { kind: 'none' } | { kind: 'error'; message: string };

export class RoleExpression {
  constructor(private readonly text: string, private readonly jq: JqRunner, private readonly timeLimitMs = EXPRESSION_TIME_LIMIT_MS) {}

  /**
   * bad_request naming jq's complaint for an expression jq cannot compile. Compiled, not run: the
   * expression sits in a branch that is never taken, so no claim is needed and nothing loops.
   */
  async check(): Promise<void> {
    const outcome = await this.run(`if false then (\n${this.text}\n) else empty end`, 'null');
    if (outcome.kind === 'error') {
      throw new AppError('bad_request', `auth.oidc: roleMapping.roleAttributePath is not a jq expression jq can compile: ${compileError(outcome.message)}`);
    }
  }

  /** The expression's first result over `claims` (as Dagu takes it), none, or why it failed. */
  async evaluate(claims: Record<string, unknown>): Promise<ExpressionResult> {
    // first(): the results after the first are never computed, as with gojq's first Next().
    const outcome = await this.run(`first(\n${this.text}\n)`, JSON.stringify(claims));
    if (outcome.kind === 'error') return { kind: 'error', message: withoutValues(outcome.message) };
    if (outcome.stdout.trim() === '') return { kind: 'none' };
    return { kind: 'value', value: JSON.parse(outcome.stdout) };
  }

  private async run(filter: string, input: string): Promise<{ kind: 'ok'; stdout: string } | { kind: 'error'; message: string }> {
    const job = this.jq.run({ input, filter, raw: false });
    const timer = setTimeout(() => job.stop(), this.timeLimitMs);
    try {
      const outcome = await job.outcome;
      return outcome.kind === 'stopped' ? { kind: 'error', message: `stopped after ${this.timeLimitMs} ms` } : outcome;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** jq's lines that say what is wrong, without the program it quotes back (ours, wrapped). */
function compileError(message: string): string {
  const lines = message.split('\n').filter((line) => line.startsWith('jq: error') && !/compile error/.test(line));
  return (lines.length > 0 ? lines.join('; ') : message.split('\n')[0]).replace(/, line \d+:$/, '');
}

/**
 * jq's runtime messages quote the values they met (`null (null) and array (["admins"])...`): the
 * strings among them are claims (emails, groups), and none of them is written to the log.
 */
function withoutValues(message: string): string {
  return message.replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
}
