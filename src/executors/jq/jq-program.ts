// One jq program over one input text, with jq-wasm (jq 1.7 compiled to WebAssembly). Loaded only in
// a jq thread (jq-thread.ts): jq-wasm runs synchronously and holds its thread until jq is done.
import { raw } from 'jq-wasm';
import { randomUUID } from 'node:crypto';

export type JqAnswer = { kind: 'ok'; stdout: string } | { kind: 'error'; message: string };

/** How results print: indented JSON with sorted keys (as Dagu prints), or raw (strings unquoted, the rest compact). */
export function jqFlags(rawOutput: boolean): string[] {
  return rawOutput ? ['--raw-output', '--compact-output', '--sort-keys'] : ['--indent', '4', '--sort-keys'];
}

/**
 * Runs `filter` over `input`. jq-wasm hands back stdout when there is any and throws jq's stderr
 * only when there is none: a runtime error after some results would pass for success. So the
 * filter is followed by a mark, printed only when it ran to its end; without the mark, the filter
 * is run again with its results dropped, which ends on the same error, alone on stderr. jq-wasm
 * also trims stdout: the same mark before the results keeps a first result's leading blanks.
 */
export async function runJqProgram(input: string, filter: string, rawOutput: boolean): Promise<JqAnswer> {
  const flags = jqFlags(rawOutput);
  const mark = `troupe-jq-end-${randomUUID()}`;
  // The newline ends a comment on the filter's last line.
  const marked = `${JSON.stringify(mark)}, (${filter}\n), ${JSON.stringify(mark)}`;
  const markLine = rawOutput ? mark : JSON.stringify(mark);
  let stdout: string;
  try {
    stdout = await raw(input, marked, flags);
  } catch {
    // Nothing printed: the filter's own message (a compile error quotes the program as written).
    return failure(await errorOf(input, filter, flags));
  }
  const lines = stdout.split('\n');
  const results = lines.filter((line) => line !== markLine).join('\n');
  if (lines.length > 1 && lines.at(-1) === markLine) return { kind: 'ok', stdout: results };
  // No mark at the end: the filter stopped early, by an error or by halt (which prints nothing on stderr).
  const message = await errorOf(input, `(${filter}\n) | empty`, flags);
  return message === undefined ? { kind: 'ok', stdout: results } : failure(message);
}

async function errorOf(input: string, filter: string, flags: string[]): Promise<string | undefined> {
  try {
    await raw(input, filter, flags);
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^Failed to execute raw query: /, '');
  }
}

function failure(message: string | undefined): JqAnswer {
  return { kind: 'error', message: message ?? 'jq failed' };
}
