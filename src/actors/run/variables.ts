// Variables a run gets from outside its definition: dotenv files and secrets, read when
// the run starts. Secret values are handed to the executor for masking and are never stored.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { AppError, ownValue, setOwn, type Dag } from '../../core/index.ts';
import { parseDotenv } from '../../definition/index.ts';

export interface RunVariables {
  /** From the dotenv files in order: later files override earlier ones. */
  dotenv: Record<string, string>;
  secrets: Record<string, string>;
}

/**
 * `dagDir` is the DAG file's directory: secret files are looked for under workingDir, then there.
 * A missing `.env` (the default) is skipped; a dotenv file named in the definition must exist.
 */
export function loadRunVariables(dag: Dag, dagDir: string, processEnv: Record<string, string | undefined>): RunVariables {
  const dotenv: Record<string, string> = {};
  for (const file of dag.dotenv) {
    const path = isAbsolute(file) ? file : join(dag.workingDir, file);
    const text = readOptional(path);
    if (text === undefined) {
      if (file === '.env') continue;
      throw new AppError('bad_request', `dotenv file ${file} not found (looked for ${path})`);
    }
    const { entries, problems } = parseDotenv(text);
    if (problems.length > 0) throw new AppError('bad_request', `dotenv file ${path}: ${problems.join('; ')}`);
    for (const [key, value] of entries) setOwn(dotenv, key, value);
  }
  const secrets: Record<string, string> = {};
  for (const secret of dag.secrets) {
    if (secret.provider === 'env') {
      const value = ownValue(processEnv, secret.key);
      if (value === undefined) throw new AppError('bad_request', `secret ${secret.name}: environment variable ${secret.key} is not set`);
      setOwn(secrets, secret.name, value);
      continue;
    }
    const candidates = isAbsolute(secret.key) ? [secret.key] : [join(dag.workingDir, secret.key), join(dagDir, secret.key)];
    let value: string | undefined;
    for (const path of candidates) {
      value = readOptional(path);
      if (value !== undefined) break;
    }
    if (value === undefined) throw new AppError('bad_request', `secret ${secret.name}: file ${secret.key} not found`);
    setOwn(secrets, secret.name, value.replace(/\r?\n$/, ''));
  }
  return { dotenv, secrets };
}

/** Small files read at once: a start should not wait on thread-pool round trips for them. */
function readOptional(path: string): string | undefined {
  // Most DAGs have no `.env`, which every start looks for: asked without an error thrown (a thrown
  // ENOENT, with its stack, cost more than the read of a small file).
  if (!statSync(path, { throwIfNoEntry: false })) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
