// Parameters: defaults from the definition, overrides from a run request, and their JSON text form.
import { AppError, setOwn, type ParamDef } from '../core/index.ts';
import { splitWords } from './command.ts';
import { refuseParamNames } from './param-names.ts';

/**
 * `NAME=value`. The name is what a name could be meant to be (`a-b=1`, `BASH_FUNC_f%%=...`), so that
 * param-names.ts refuses it by name rather than take it silently for a positional value; `1=x`,
 * `--flag=x` and `https://x?a=b` stay positional values.
 */
const namedPattern = /^([A-Za-z0-9_][A-Za-z0-9_.%-]*)=(.*)$/s;

function fromWord(word: string): ParamDef {
  const match = namedPattern.exec(word);
  return match && !/^[0-9]+$/.test(match[1]) ? { name: match[1], value: match[2] } : { value: word };
}

/** Parses `KEY=value KEY2="v 2" positional` text. */
export function paramsFromText(text: string): ParamDef[] {
  return splitWords(text).map(fromWord);
}

/**
 * The params of a run request: JSON object text, JSON array text, or KEY=value text (docs/api.md).
 * A name that is not a variable name, or is reserved (param-names.ts), refuses the request.
 */
export function paramsFromRequest(text: string): ParamDef[] {
  const params = parsedParams(text);
  refuseParamNames(params.map((param) => param.name));
  return params;
}

function parsedParams(text: string): ParamDef[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new AppError('bad_request', 'params is not valid JSON');
    }
    if (Array.isArray(parsed)) return parsed.map((item) => fromWord(scalarText(item)));
    if (parsed !== null && typeof parsed === 'object') {
      return Object.entries(parsed).map(([name, value]) =>
        /^[0-9]+$/.test(name) ? { value: scalarText(value) } : { name, value: scalarText(value) });
    }
    throw new AppError('bad_request', 'params must be a JSON object, a JSON array or KEY=value text');
  }
  return paramsFromText(trimmed);
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    // JSON.parse reads nesting that JSON.stringify cannot write back within the stack.
    throw new AppError('bad_request', 'params nest too deeply');
  }
}

/** Request params override defaults: named ones by name, positional ones by position. */
export function mergeParams(defaults: ParamDef[], overrides: ParamDef[]): ParamDef[] {
  const merged = defaults.map((param) => ({ ...param }));
  let position = 0;
  for (const override of overrides) {
    if (override.name !== undefined) {
      const existing = merged.find((param) => param.name === override.name);
      if (existing) existing.value = override.value;
      else merged.push({ ...override });
    } else {
      const slots = merged.filter((param) => param.name === undefined);
      if (position < slots.length) slots[position].value = override.value;
      else merged.push({ ...override });
      position++;
    }
  }
  return merged;
}

/** Named parameters by name, positional ones under "1", "2"... */
export function paramsRecord(params: ParamDef[]): Record<string, string> {
  const record: Record<string, string> = {};
  let position = 0;
  for (const param of params) setOwn(record, param.name ?? String(++position), param.value);
  return record;
}

export function paramsJson(params: ParamDef[]): string {
  return params.length === 0 ? '' : JSON.stringify(paramsRecord(params));
}

/** The API's list form: NAME=value for named, the value alone for positional. */
export function paramsList(params: ParamDef[]): string[] {
  return params.map((param) => (param.name === undefined ? param.value : `${param.name}=${param.value}`));
}
