// Runs every test file through tsx with node's test runner. Node 20 neither globs nor finds
// .ts files by itself, so the file list is built here.
//
// The TAP stream passes through as it comes. A failing test's lines are also kept and printed
// again after the run, so the end of a long log (often all a CI page shows) names what failed.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

function find(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'node_modules' ? [] : find(path);
    return path.endsWith('.test.ts') ? [path] : [];
  });
}

// `node scripts/test.mjs FILE...` runs only the files named.
const named = process.argv.slice(2);
const files = named.length > 0 ? named : [...find('src'), ...find('test')].sort();
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', '--test-concurrency=1', ...files], {
  stdio: ['inherit', 'pipe', 'inherit'],
});

const failures = [];
let current = null; // the lines of the failure being read: its "not ok" line and its YAML block
const lines = createInterface({ input: child.stdout });
lines.on('line', (line) => {
  process.stdout.write(line + '\n');
  const failed = /^(\s*)not ok \d+ - /.exec(line);
  if (failed) {
    current = { indent: failed[1].length, lines: [line] };
    failures.push(current);
    return;
  }
  if (!current) return;
  const indent = /^\s*/.exec(line)[0].length;
  if (indent > current.indent && current.lines.length < 60) current.lines.push(line);
  else if (indent <= current.indent) current = null;
});

child.on('close', (code, signal) => {
  // A suite fails when a test in it fails; print only the innermost failures, the ones with
  // their own error. A failure that holds another one is a suite.
  const innermost = failures.filter((f) => !f.lines.some((l) => l.includes("type: 'suite'")));
  if (innermost.length > 0) {
    process.stdout.write(`\n# ${innermost.length} failing test(s), again:\n`);
    for (const failure of innermost) process.stdout.write(failure.lines.join('\n') + '\n');
  }
  process.exit(code ?? (signal ? 1 : 0));
});
