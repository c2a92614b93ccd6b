// secrets and dotenv: where a run's extra variables come from. Read here; loaded at run time.
import type { SecretRef } from '../core/index.ts';
import { isPlainMap, type FieldReader } from './field-reader.ts';
import type { Path } from './issues.ts';

const SECRET_KEYS = ['name', 'provider', 'key', 'options'] as const;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function readSecrets(reader: FieldReader, value: unknown): SecretRef[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    reader.report(['secrets'], 'must be a list of {name, provider, key}');
    return [];
  }
  const secrets: SecretRef[] = [];
  const names = new Set<string>();
  value.forEach((item, index) => {
    const at: Path = ['secrets', index];
    if (!isPlainMap(item)) {
      reader.report(at, 'must be a map with name, provider and key');
      return;
    }
    reader.knownKeys(item, SECRET_KEYS, at);
    const name = reader.string(item, 'name', at);
    const provider = reader.string(item, 'provider', at);
    const key = reader.string(item, 'key', at);
    if (name === undefined) reader.report(at, 'needs a name');
    else if (!VARIABLE_NAME.test(name)) reader.report([...at, 'name'], `invalid variable name "${name}"`);
    else if (names.has(name)) reader.report([...at, 'name'], `duplicate secret "${name}"`);
    if (provider === undefined) reader.report(at, 'needs a provider (env or file)');
    else if (provider !== 'env' && provider !== 'file') reader.report([...at, 'provider'], 'must be "env" or "file"');
    if (key === undefined) reader.report(at, 'needs a key');
    if (name === undefined || !VARIABLE_NAME.test(name) || names.has(name) || (provider !== 'env' && provider !== 'file') || key === undefined) return;
    names.add(name);
    secrets.push({ name, provider, key, options: reader.stringMap(item, 'options', at) ?? {} });
  });
  return secrets;
}

/** Absent: `.env`; a string or a list of files; an empty list loads none. */
export function readDotenv(reader: FieldReader, root: Record<string, unknown>): string[] {
  if (root.dotenv === undefined || root.dotenv === null) return ['.env'];
  return reader.stringList(root, 'dotenv', []) ?? ['.env'];
}
