// Validation of every name and id that can reach the file system or a store key.

const dagNamePattern = /^[A-Za-z0-9_.-]+$/;
export const MAX_RUN_ID_LENGTH = 128;
const runIdPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export const MAX_DAG_NAME_LENGTH = 40;

/** Returns a problem description, or undefined when the DAG name is acceptable. */
export function dagNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'name is required';
  if (name.length > MAX_DAG_NAME_LENGTH) return `name must be at most ${MAX_DAG_NAME_LENGTH} characters`;
  if (!dagNamePattern.test(name)) return 'name must only contain letters, digits, underscores, dots and hyphens';
  // "." and ".." satisfy the character set but name directories, not files.
  if (name === '.' || name === '..') return 'name must not be "." or ".."';
  return undefined;
}

export function isValidDagName(name: unknown): name is string {
  return dagNameProblem(name) === undefined;
}

export const MAX_QUEUE_NAME_LENGTH = 128;

/**
 * Queue names: a DAG's name (its dag-based queue) or a custom queue's from the configuration. The
 * characters of DAG names, longer: they become store keys.
 */
export function queueNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'queue name is required';
  if (name.length > MAX_QUEUE_NAME_LENGTH) return `queue name must be at most ${MAX_QUEUE_NAME_LENGTH} characters`;
  if (!dagNamePattern.test(name)) return 'queue name must only contain letters, digits, underscores, dots and hyphens';
  return undefined;
}

/** Ids the API reads as something else: `latest` names a DAG's newest run in every run path. */
const RESERVED_RUN_IDS = new Set(['latest']);

export function dagRunIdProblem(id: unknown): string | undefined {
  if (typeof id !== 'string' || id.length === 0) return 'dagRunId is required';
  if (RESERVED_RUN_IDS.has(id)) return `dagRunId "${id}" is reserved: it names the newest run of a DAG`;
  if (!runIdPattern.test(id)) {
    return 'dagRunId must start with a letter or digit and contain at most 128 letters, digits, underscores, dots and hyphens';
  }
  return undefined;
}

/** A step name turned into a safe file-name component (step names may hold any text). */
export function fileSafe(text: string): string {
  const safe = text.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^\.+/, '_').slice(0, 60);
  return safe.length > 0 ? safe : '_';
}
