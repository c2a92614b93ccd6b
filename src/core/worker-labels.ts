// A worker's labels and a DAG's workerSelector: the selector names labels a worker must carry, each
// matching exactly (case-sensitive); an empty selector is met by any worker.

/** A worker's id: what its queue is named after (BullMQ's names take no colon). */
const WORKER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Why `id` cannot name a worker (`troupe worker --id`, the queue it takes runs from), or undefined. */
export function workerIdProblem(id: string): string | undefined {
  return WORKER_ID.test(id) ? undefined : `worker id "${id}" must be 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit`;
}

/** `k=v,k2=v2` (`troupe worker --labels`) as a map; throws naming the first malformed pair. */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of text.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const equals = pair.indexOf('=');
    const key = equals > 0 ? pair.slice(0, equals).trim() : '';
    if (key === '') throw new Error(`label "${pair}" must be key=value`);
    if (Object.hasOwn(labels, key)) throw new Error(`label ${key} is given twice`);
    labels[key] = pair.slice(equals + 1).trim();
  }
  return labels;
}

/** Whether a worker with `labels` may run a DAG run with `selector`. */
export function selectorMatches(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([key, value]) => Object.hasOwn(labels, key) && labels[key] === value);
}
