// Work over many items split across turns of the event loop, so that other requests are answered
// between the slices (a run of 10,000 steps is planned, built and encoded this way as it starts).
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Items handled per turn: 1,000 steps or nodes of a run cost a few milliseconds. */
export const ITEMS_PER_TURN = 1000;

/**
 * `fn` for each index below `count`: at once when there are no more than `perTurn`, else a slice
 * of `perTurn` per turn, each in a turn of its own (the caller's turn may have done much already).
 */
export async function eachInTurns(count: number, fn: (index: number) => void, perTurn = ITEMS_PER_TURN): Promise<void> {
  for (let from = 0; from < count; from += perTurn) {
    if (count > perTurn) await nextTurn();
    const to = Math.min(count, from + perTurn);
    for (let index = from; index < to; index++) fn(index);
  }
}

/** `items.map(fn)`, sliced as eachInTurns slices. */
export async function mapInTurns<T, U>(items: readonly T[], fn: (item: T, index: number) => U, perTurn = ITEMS_PER_TURN): Promise<U[]> {
  const mapped: U[] = [];
  await eachInTurns(items.length, (index) => { mapped.push(fn(items[index], index)); }, perTurn);
  return mapped;
}
