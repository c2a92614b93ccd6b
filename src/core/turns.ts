// Work over many items split across turns of the event loop, so that other requests are answered
// between the slices (a run of 10,000 steps is planned, built and encoded this way as it starts).
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Items handled per turn: 1,000 steps or nodes of a run cost a few milliseconds. */
export const ITEMS_PER_TURN = 1000;

/** `items.map(fn)`, the first slice in this turn and each further one in a turn of its own. */
export async function mapInTurns<T, U>(items: readonly T[], fn: (item: T, index: number) => U, perTurn = ITEMS_PER_TURN): Promise<U[]> {
  const mapped: U[] = [];
  for (let from = 0; from < items.length; from += perTurn) {
    if (from > 0) await nextTurn();
    const to = Math.min(items.length, from + perTurn);
    for (let index = from; index < to; index++) mapped.push(fn(items[index], index));
  }
  return mapped;
}
