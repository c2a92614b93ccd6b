// A verb's DAG argument, as Dagu takes it: the name of a DAG in the DAGs folder, or the path of a
// YAML file (run as an inline spec, unless the file is in the DAGs folder).
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, resolve } from 'node:path';
import { parseYamlMap } from '../definition/index.ts';
import { CliError } from './errors.ts';
import type { DagRef } from './backend/types.ts';

export function dagRef(argument: string, dagsDir: string): DagRef {
  if (!looksLikePath(argument)) return { kind: 'stored', fileName: argument };
  const path = resolve(argument);
  if (!existsSync(path)) throw new CliError(`no DAG file ${argument}`, 'check the path, or give the name of a DAG in the DAGs folder');
  const fileName = basename(path, extname(path));
  if (dirname(path) === resolve(dagsDir)) return { kind: 'stored', fileName };
  const spec = readFileSync(path, 'utf8');
  return { kind: 'file', path, spec, name: specName(spec) ?? fileName };
}

/** The DAG name its runs are stored under: the spec's `name`, else the file's name. */
export function dagName(argument: string, dagsDir: string): string {
  const ref = dagRef(argument, dagsDir);
  if (ref.kind === 'file') return ref.name;
  const stored = resolve(dagsDir, `${ref.fileName}.yaml`);
  const spec = existsSync(stored) ? readFileSync(stored, 'utf8') : undefined;
  return (spec && specName(spec)) ?? ref.fileName;
}

/** The DAG's YAML text, from its file or the DAGs folder. */
export function dagSpec(argument: string, dagsDir: string): { spec: string; fileName: string; path: string } {
  const ref = dagRef(argument, dagsDir);
  if (ref.kind === 'file') return { spec: ref.spec, fileName: basename(ref.path, extname(ref.path)), path: ref.path };
  for (const ext of ['.yaml', '.yml']) {
    const path = resolve(dagsDir, `${ref.fileName}${ext}`);
    if (existsSync(path)) return { spec: readFileSync(path, 'utf8'), fileName: ref.fileName, path };
  }
  throw new CliError(`no DAG ${argument} in ${dagsDir}`, 'check the name, pass --dags DIR, or give the path of a YAML file');
}

function looksLikePath(argument: string): boolean {
  return isAbsolute(argument) || argument.includes('/') || /\.ya?ml$/i.test(argument);
}

function specName(spec: string): string | undefined {
  try {
    const name = parseYamlMap(spec).name;
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    // Not readable here: the server or engine says what is wrong with it when it is run.
    return undefined;
  }
}

/** Params from `-p` and from the words after `--` (Dagu's two ways), as the API takes them. */
export function paramsOf(flag: string | undefined, words: string[]): string | undefined {
  if (words.length > 0) {
    if (flag !== undefined) throw new CliError('params are given both with -p and after --', 'give them one way');
    return JSON.stringify(words);
  }
  return flag;
}
