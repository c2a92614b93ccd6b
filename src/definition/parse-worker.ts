// Worker-thread entry: reads a large definition off the main thread (definition-parser.ts). Never
// throws: the answer crosses the thread boundary as data.
import { readDefinition } from './dag-parser.ts';
import type { ParseAnswer, ParseTask } from './definition-parser.ts';

export default function readInWorker({ text, options }: ParseTask): ParseAnswer {
  try {
    return { kind: 'ok', read: readDefinition(text, options) };
  } catch (error) {
    return { kind: 'error', message: (error as Error).message };
  }
}
