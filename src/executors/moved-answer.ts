// What a TaskPool worker's default export returns to move buffers to the calling thread, not copy
// them. Its own module: it loads Piscina, which a worker thread has loaded already, and which the
// task pool's users load only with their first task.
import { Piscina } from 'piscina';

/**
 * A task's answer with `buffers` moved to the calling thread, not copied (a worker's default export
 * returns it). Each buffer is the worker's no longer: nothing may use it after.
 */
export function movedAnswer<Answer extends object>(answer: Answer, buffers: ArrayBuffer[]): Answer {
  return Piscina.move({ [Piscina.transferableSymbol]: buffers, [Piscina.valueSymbol]: answer } as unknown as ArrayBuffer) as unknown as Answer;
}
