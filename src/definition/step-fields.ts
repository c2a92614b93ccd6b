// Step fields beyond the command (definition format: step fields): output files, shell packages, mail, timeout,
// sub DAG parameters, fan-out and the worker a sub DAG run is placed on.
import { posix as path } from 'node:path';
import type { Step } from '../core/index.ts';
import { dropUndefined, isPlainMap, type FieldReader } from './field-reader.ts';
import type { Path } from './issues.ts';

type StepFields = Pick<Step, 'stdout' | 'stderr' | 'shellPackages' | 'mailOnError' | 'timeoutSec' | 'params' | 'parallel' | 'workerSelector'>;

/** `dir` is the step's resolved working directory: relative output files resolve against it. */
export function readStepFields(reader: FieldReader, value: Record<string, unknown>, at: Path, dir: string): StepFields {
  const stdout = reader.string(value, 'stdout', at);
  const stderr = reader.string(value, 'stderr', at);
  return dropUndefined({
    stdout: stdout === undefined ? undefined : path.resolve(dir, stdout),
    stderr: stderr === undefined ? undefined : path.resolve(dir, stderr),
    shellPackages: reader.stringList(value, 'shellPackages', at) ?? [],
    mailOnError: reader.boolean(value, 'mailOnError', at) ?? false,
    timeoutSec: reader.integer(value, 'timeoutSec', at),
    params: readStepParams(reader, value, at),
    parallel: readParallel(reader, value, at),
    workerSelector: nonEmpty(reader.stringMap(value, 'workerSelector', at)),
  });
}

const nonEmpty = (map: Record<string, string> | undefined) => (map && Object.keys(map).length > 0 ? map : undefined);

/**
 * A string (`A=1 B="two"`), a map, or a list of one-key maps (`- A: 1`, as Dagu reads it, in its
 * order): parameters of a sub DAG, or an executor's inputs.
 */
function readStepParams(reader: FieldReader, value: Record<string, unknown>, at: Path): Step['params'] {
  const params = value.params;
  if (params === undefined || params === null) return undefined;
  if (typeof params === 'string') return params;
  if (isPlainMap(params)) return reader.stringMap(value, 'params', at);
  if (Array.isArray(params) && params.length > 0 && params.every((entry) => isPlainMap(entry) && Object.keys(entry).length === 1)) {
    return reader.stringMap({ params: Object.assign(Object.create(null) as Record<string, unknown>, ...params) }, 'params', at);
  }
  reader.report([...at, 'params'], 'must be a string, a map, or a list of one-key maps');
  return undefined;
}

/** A list of items, a variable holding them, or {items, maxConcurrent}; maxConcurrent may sit beside it. */
function readParallel(reader: FieldReader, value: Record<string, unknown>, at: Path): Step['parallel'] {
  const parallel = value.parallel;
  const outerLimit = reader.integer(value, 'maxConcurrent', at, 1);
  if (parallel === undefined || parallel === null) {
    if (outerLimit !== undefined) reader.report([...at, 'maxConcurrent'], 'needs parallel');
    return undefined;
  }
  if (Array.isArray(parallel) || typeof parallel === 'string') return dropUndefined({ items: parallel, maxConcurrent: outerLimit });
  if (!isPlainMap(parallel)) {
    reader.report([...at, 'parallel'], 'must be a list of items, a variable, or {items, maxConcurrent}');
    return undefined;
  }
  const where = [...at, 'parallel'];
  reader.knownKeys(parallel, ['items', 'maxConcurrent'], where);
  const items = parallel.items;
  if (!Array.isArray(items) && typeof items !== 'string') {
    reader.report(where, 'needs items: a list or a variable');
    return undefined;
  }
  const limit = reader.integer(parallel, 'maxConcurrent', where, 1);
  if (limit !== undefined && outerLimit !== undefined) reader.report([...at, 'maxConcurrent'], 'set maxConcurrent once');
  return dropUndefined({ items, maxConcurrent: limit ?? outerLimit });
}
