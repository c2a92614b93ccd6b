// Records keyed by input (variable, param, output, step and DAG names). A name such as `__proto__`
// or `constructor` must be an ordinary key: plain assignment to `__proto__` changes the record's
// prototype instead, and a plain read of `constructor` finds Object's.

/** Sets `key` as the record's own property, whatever its name. */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
}

/** The record's own value at `key`; never one inherited from Object.prototype. */
export function ownValue<T>(record: Record<string, T> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
