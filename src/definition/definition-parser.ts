// Parses definitions without holding the event loop: a text above `OFF_THREAD_CHARS` is read on a
// worker thread (the `yaml` library's parse costs 0.5 to 2 us per byte, most of a second near the
// 1 MiB body limit); a smaller one is read inline, where it costs a few milliseconds and no
// message. Most DAG files are a few KiB: listings read them inline.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { deserialize } from 'node:v8';
import { AppError, type Step } from '../core/index.ts';
import { finishParse, readDefinition, type DefinitionRead, type ParseOptions, type ParseResult, type ReadOptions } from './dag-parser.ts';

export const OFF_THREAD_CHARS = 16 * 1024;

/** The worker's entry file, for the pool that runs `ParseTask`s. */
export const parseWorkerFile = new URL(import.meta.url.endsWith('.ts') ? './parse-worker.ts' : './parse-worker.js', import.meta.url);

export interface ParseTask {
  text: string;
  options: ReadOptions;
}

/** Steps per piece of a large definition's answer (`steps`: the DAG's steps, serialized in order, its own `steps` empty). */
export const STEPS_PER_PIECE = 1000;

export type ParseAnswer = { kind: 'ok'; read: DefinitionRead; steps?: Uint8Array[] } | { kind: 'error'; message: string };

/** Runs a task on the parse worker; rejects only when the thread could not answer (it died, the pool closed). */
export type RunParseTask = (task: ParseTask) => Promise<ParseAnswer>;

export class DefinitionParser {
  /** Without `runTask` every text is read inline (embedders, unit tests). */
  constructor(private readonly runTask?: RunParseTask, private readonly offThreadChars = OFF_THREAD_CHARS) {}

  async parse(text: string, options: ParseOptions): Promise<ParseResult> {
    if (!this.runTask || text.length <= this.offThreadChars) return finishParse(readDefinition(text, options));
    const { read, steps } = await this.readOffThread({ text, options });
    if (!steps || !read.dag) return finishParse(read);
    // A piece per turn: what the caller does with the definition next (its checks, a run's
    // start) comes after them, in a turn of its own.
    const decoded: Step[] = [];
    for (const piece of steps) {
      await nextTurn();
      for (const step of deserialize(piece) as Step[]) decoded.push(step);
    }
    await nextTurn();
    return finishParse({ ...read, dag: { ...read.dag, steps: decoded } });
  }

  private async readOffThread(task: ParseTask): Promise<{ read: DefinitionRead; steps?: Uint8Array[] }> {
    let answer: ParseAnswer;
    try {
      answer = await this.runTask!(task);
    } catch (error) {
      throw new AppError('internal_error', `the definition could not be parsed: ${(error as Error).message}`);
    }
    if (answer.kind === 'error') throw new AppError('internal_error', `the definition could not be parsed: ${answer.message}`);
    return answer;
  }
}
