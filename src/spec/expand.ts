// Variable references in commands and env values. Unknown names are left for the shell to expand.

const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+)\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])/g;

export function expandVariables(text: string, lookup: (name: string) => string | undefined): string {
  if (!text.includes('$')) return text;
  return text.replace(reference, (whole, braced: string | undefined, bare: string | undefined) => {
    const value = lookup((braced ?? bare) as string);
    return value === undefined ? whole : value;
  });
}

/** Evaluates KEY=value pairs in order, so that later values see earlier ones. */
export function evaluateEnv(
  entries: Array<[string, string]>,
  base: Record<string, string>,
): Record<string, string> {
  const scope = { ...base };
  const result: Record<string, string> = {};
  for (const [key, template] of entries) {
    const value = expandVariables(template, (name) => scope[name]);
    scope[key] = value;
    result[key] = value;
  }
  return result;
}

const systemNames = new Set(['PATH', 'HOME', 'LANG', 'TZ', 'SHELL']);
const systemPrefixes = ['TROUPE_', 'LC_', 'DAG_'];

/** The part of the server's environment a step may see (COMPAT.md); nothing else leaks in. */
export function filterSystemEnv(env: Record<string, string | undefined>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (systemNames.has(key) || systemPrefixes.some((prefix) => key.startsWith(prefix))) result[key] = value;
  }
  return result;
}
