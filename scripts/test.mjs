// Runs every test file through tsx with node's test runner. Node 20 neither globs nor finds
// .ts files by itself, so the file list is built here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'node_modules' ? [] : find(path);
    return path.endsWith('.test.ts') ? [path] : [];
  });
}

const files = [...find('src'), ...find('test')].sort();
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', '--test-concurrency=1', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
