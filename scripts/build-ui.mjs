// Builds the dashboard: bundles ui/main.tsx (Preact, TSX, its stylesheet) into
// dist/ui/assets/app-[hash].js and .css, writes dist/ui/index.html that loads them, and a gzip
// (level 9) beside each so the server can send them precompressed. Prints nothing on success.
import { build } from 'esbuild';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, constants } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/ui`;

const result = await build({
  entryPoints: { app: `${root}ui/main.tsx` },
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2020',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: `${out}/assets`,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  write: false,
  metafile: true,
  logLevel: 'warning',
});

// Hashed names change with every change: old assets are removed, not left to pile up.
await rm(out, { recursive: true, force: true });
await mkdir(`${out}/assets`, { recursive: true });

async function writeWithGzip(path, contents) {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, contents);
  await writeFile(`${path}.gz`, gzipSync(contents, { level: constants.Z_BEST_COMPRESSION }));
}

let script;
let stylesheet;
for (const file of result.outputFiles) {
  await writeWithGzip(file.path, file.contents);
  if (file.path.endsWith('.js')) script = basename(file.path);
  if (file.path.endsWith('.css')) stylesheet = basename(file.path);
}
if (!script) throw new Error('build-ui: esbuild produced no script');

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>troupe</title>
${stylesheet ? `<link rel="stylesheet" href="/assets/${stylesheet}">\n` : ''}<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The troupe dashboard needs JavaScript. The REST API is at /api/v2.</noscript>
</body>
</html>
`;
await writeWithGzip(`${out}/index.html`, Buffer.from(html));
