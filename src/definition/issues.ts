// A validation problem with its field path and YAML line; every problem is collected, none stops parsing.

export interface SpecIssue {
  path: string;
  line?: number;
  message: string;
}

export function formatIssue(issue: SpecIssue): string {
  const where = issue.path ? `${issue.path}${issue.line ? ` (line ${issue.line})` : ''}: ` : issue.line ? `line ${issue.line}: ` : '';
  return `${where}${issue.message}`;
}

export type Path = Array<string | number>;

export function pathText(path: Path): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out ? `.${part}` : part;
  return out;
}
