// JSON as Go's encoding/json writes it, for the executors that print Dagu's documents: <, >, &,
// U+2028 and U+2029 escaped; MarshalIndent's decoded document has its object keys sorted (byte
// order, so "10" before "2", which JSON.stringify would put the other way round).

/** `value` written at a depth whose lines start with `prefix` (its first line is not prefixed). */
export function goMarshalIndent(value: unknown, indent: string, prefix = ''): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  const inner = prefix + indent;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => inner + goMarshalIndent(item, indent, inner)).join(',\n')}\n${prefix}]`;
  }
  const keys = Object.keys(value as object).sort(byBytes);
  if (keys.length === 0) return '{}';
  const record = value as Record<string, unknown>;
  return `{\n${keys.map((key) => `${inner}${goString(key)}: ${goMarshalIndent(record[key], indent, inner)}`).join(',\n')}\n${prefix}}`;
}

function goString(text: string): string {
  return goHtmlEscape(JSON.stringify(text));
}

/** JSON text with <, >, &, U+2028 and U+2029 escaped, as Go's encoder writes them (only strings can hold them). */
export function goHtmlEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
