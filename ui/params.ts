// What a start asks for: the DAG's params as fields with their defaults (named ones by name,
// positional ones as 1, 2...), else one text field for params the form cannot split.

export type ParamForm =
  | { kind: 'none' }
  | { kind: 'fields'; fields: { name: string; value: string }[] }
  | { kind: 'text'; text: string };

// The server takes a JSON object whose keys are names, or 1, 2... for positional params.
const fieldName = /^(?:[A-Za-z_][A-Za-z0-9_]*|[1-9][0-9]*)$/;

export function paramForm(dag: { params: string[]; defaultParams: string }): ParamForm {
  if (!dag.params.length && !dag.defaultParams) return { kind: 'none' };
  try {
    const value = JSON.parse(dag.defaultParams) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length && entries.every(([k]) => fieldName.test(k))) {
        return { kind: 'fields', fields: entries.map(([name, v]) => ({ name, value: typeof v === 'string' ? v : JSON.stringify(v) })) };
      }
    }
  } catch {
    // Not JSON: offered as text below.
  }
  return { kind: 'text', text: dag.defaultParams || dag.params.join(' ') };
}

/** The start body's `params`: a JSON object text for named fields, the text as typed otherwise. */
export function paramsBody(form: ParamForm): string | undefined {
  if (form.kind === 'fields') return JSON.stringify(Object.fromEntries(form.fields.map((f) => [f.name, f.value])));
  if (form.kind === 'text') return form.text.trim() || undefined;
  return undefined;
}
