// One jq program over one input text, with jq-wasm (jq 1.7 compiled to WebAssembly). Loaded only in
// a jq thread (jq-thread.ts): jq runs synchronously and holds its thread until it is done.
import { loadJq, type JqModule } from './jq-module.ts';

export type JqAnswer = { kind: 'ok'; stdout: string } | { kind: 'error'; message: string };

/** How results print: indented JSON with sorted keys (as Dagu prints), or raw (strings unquoted, the rest compact). */
export function jqFlags(rawOutput: boolean): string[] {
  return rawOutput ? ['--raw-output', '--compact-output', '--sort-keys'] : ['--indent', '4', '--sort-keys'];
}

let jq: Promise<JqModule> | undefined;

/**
 * Runs `filter` over `input`. jq's exit status decides, as for the jq command: a runtime error after
 * some results fails the program, `halt` ends it with the results so far. The results lose only the
 * newline after the last one.
 */
export async function runJqProgram(input: string, filter: string, rawOutput: boolean): Promise<JqAnswer> {
  const loading = jq ??= loadJq();
  let module: JqModule;
  try {
    module = await loading;
  } catch (error) {
    jq = undefined;
    return { kind: 'error', message: `jq: jq-wasm did not load: ${(error as Error).message}` };
  }
  let exit;
  try {
    exit = module.run(['--monochrome-output', ...jqFlags(rawOutput), filter], Buffer.from(input));
  } catch (error) {
    // The module aborted (out of memory, a failed assertion): its state is lost, the next program loads it anew.
    jq = undefined;
    if (module.memoryBytes() >= module.maxMemoryBytes) {
      return { kind: 'error', message: `jq: out of memory: jq-wasm gives jq at most ${Math.round(module.maxMemoryBytes / 2 ** 20)} MB (about 15 MB of input JSON)` };
    }
    return { kind: 'error', message: `jq: ${(error as Error).message}` };
  }
  if (exit.status !== 0) return { kind: 'error', message: exit.stderr.trim() || `jq failed (exit status ${exit.status})` };
  return { kind: 'ok', stdout: exit.stdout.endsWith('\n') ? exit.stdout.slice(0, -1) : exit.stdout };
}
