// The text of a dotenv file: KEY=value lines, `export ` prefixes, # comments, blank lines, values in
// single quotes (literal) or double quotes (with \n \t \" \\ escapes). Pure: the runtime reads the files.

export interface DotenvResult {
  entries: Array<[string, string]>;
  /** Lines that are not assignments, with their 1-based numbers. */
  problems: string[];
}

const assignment = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/s;

export function parseDotenv(text: string): DotenvResult {
  const entries: Array<[string, string]> = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = assignment.exec(line);
    if (!match) {
      problems.push(`line ${index + 1}: not a KEY=value assignment`);
      return;
    }
    entries.push([match[1], valueOf(match[2])]);
  });
  return { entries, problems };
}

function valueOf(text: string): string {
  if (text.startsWith("'")) {
    const end = text.indexOf("'", 1);
    return end > 0 ? text.slice(1, end) : text.slice(1);
  }
  if (text.startsWith('"')) {
    let out = '';
    for (let i = 1; i < text.length; i++) {
      const char = text[i];
      if (char === '"') break;
      if (char === '\\' && i + 1 < text.length) {
        const next = text[++i];
        out += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'r' ? '\r' : next;
      } else {
        out += char;
      }
    }
    return out;
  }
  // Unquoted: a ` #` starts a comment.
  const comment = text.search(/\s#/);
  return (comment >= 0 ? text.slice(0, comment) : text).trim();
}
