// Worker-thread entry: reads a large definition off the main thread (definition-parser.ts). Never
// throws: the answer crosses the thread boundary as data.
import { serialize } from 'node:v8';
import { readDefinition } from './dag-parser.ts';
import { STEPS_PER_PIECE, type ParseAnswer, type ParseTask } from './definition-parser.ts';

export default function readInWorker({ text, options }: ParseTask): ParseAnswer {
  try {
    const read = readDefinition(text, options);
    const steps = read.dag?.steps ?? [];
    if (steps.length <= STEPS_PER_PIECE) return { kind: 'ok', read };
    // Thousands of steps go as pieces the caller decodes one per turn of its event loop: decoded
    // with the answer, 10,000 steps held the main thread for tens of milliseconds.
    const pieces: Uint8Array[] = [];
    for (let from = 0; from < steps.length; from += STEPS_PER_PIECE) pieces.push(serialize(steps.slice(from, from + STEPS_PER_PIECE)));
    return { kind: 'ok', read: { ...read, dag: { ...read.dag!, steps: [] } }, steps: pieces };
  } catch (error) {
    return { kind: 'error', message: (error as Error).message };
  }
}
