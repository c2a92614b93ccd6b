// Replaces secret values with ******* (longest first, every occurrence): in step output (executors)
// and in whatever else of a run reaches a record, a log or a response (actors).

export const MASK = '*******';

export function createMasker(secrets: readonly string[]): (text: string) => string {
  const values = [...new Set(secrets.filter((secret) => secret.length > 0))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const value of values) out = out.split(value).join(MASK);
    return out;
  };
}
