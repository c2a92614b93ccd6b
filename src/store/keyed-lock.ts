// Serializes tasks per key (a DAG file name): a write, rename or removal of one file runs alone,
// while tasks on other files go on. Keys are taken in sorted order, so two tasks that need the same
// two keys (a rename) never wait on each other.
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(keys: string[], task: () => Promise<T>): Promise<T> {
    const ordered = [...new Set(keys)].sort();
    return ordered.reduceRight<() => Promise<T>>((inner, key) => () => this.one(key, inner), task)();
  }

  private async one<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => { release = resolve; }));
    this.tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
