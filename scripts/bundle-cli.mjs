// build step, after tsc: bundles the troupe command (src/cli/main.ts) into dist/cli/bundle/, one file
// for what every verb loads and one chunk for each group of modules a verb loads when it runs (the
// verbs' dynamic imports stay chunk boundaries, so `validate` still never loads the engine).
// Node then resolves and reads a few dozen files for a verb instead of about two hundred; the bin,
// dist/cli/main.js, only imports the bundle's entry. The rest of dist/ (the library, the worker
// threads' entries, the step host) is tsc's output as before, and what the bundle finds through
// its own module's URL (worker files, the spawn addon, package.json, vendor/, dist/ui) is found
// where tsc's file of that module lies: each `import.meta.url` is rewritten to that file's URL.
// dist/cli/bundle/inputs.json lists the source modules each output holds (test/cli-startup.test.ts).
import { build } from 'esbuild';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/cli/bundle`;

// Plain JavaScript packages the verbs load, bundled in. Every other package stays a package of
// node_modules: those with native parts (lmdb, argon2, uWebSockets.js), those that start threads
// or processes from files of their own (piscina, pino), and those only the server or a worker
// thread loads.
const BUNDLED = new Set(['commander', 'yaml', 'xstate', 'croner', 'parse-duration', 'picomatch']);

/** `import.meta.url` of a source module, as tsc's file of it sees it (dist/<path>.js, two folders above the bundle). */
const metaUrlAsCompiled = {
  name: 'meta-url-as-compiled',
  setup(builder) {
    builder.onLoad({ filter: /\/src\/.*\.ts$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      if (!source.includes('import.meta.url')) return { contents: source, loader: 'ts' };
      const compiled = relative(`${root}src`, path).replace(/\.ts$/, '.js');
      return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(`../../${compiled}`)}, import.meta.url).href`), loader: 'ts' };
    });
    builder.onResolve({ filter: /^[^./]/ }, ({ path }) => {
      if (path.startsWith('node:')) return { external: true };
      const name = path.startsWith('@') ? path.split('/').slice(0, 2).join('/') : path.split('/')[0];
      return BUNDLED.has(name) ? undefined : { external: true };
    });
  },
};

await rm(out, { recursive: true, force: true });
const result = await build({
  entryPoints: { main: `${root}src/cli/main.ts` },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  absWorkingDir: root,
  outdir: out,
  chunkNames: '[name]-[hash]',
  // The CommonJS packages bundled in require Node's modules.
  banner: { js: "import { createRequire as __troupeCreateRequire } from 'node:module';\nconst require = __troupeCreateRequire(import.meta.url);" },
  plugins: [metaUrlAsCompiled],
  metafile: true,
  logLevel: 'warning',
});

const inputs = Object.fromEntries(Object.entries(result.metafile.outputs)
  .filter(([file]) => file.endsWith('.js'))
  .map(([file, output]) => [relative(out, `${root}${file}`), Object.keys(output.inputs)]));
await writeFile(`${out}/inputs.json`, `${JSON.stringify(inputs, null, 1)}\n`);
await writeFile(`${root}dist/cli/main.js`, "#!/usr/bin/env node\n// The troupe command: its bundle (scripts/bundle-cli.mjs).\nimport './bundle/main.js';\n");
