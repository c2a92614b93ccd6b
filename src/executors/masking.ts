// Replaces secret values with ******* (longest first, every occurrence).

export const MASK = '*******';

export function createMasker(secrets: string[]): (text: string) => string {
  const values = [...new Set(secrets.filter((secret) => secret.length > 0))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const value of values) out = out.split(value).join(MASK);
    return out;
  };
}
