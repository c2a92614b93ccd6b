// prepare step: bundles the parts of TypeBox the HTTP layer uses into vendor/typebox.mjs.
// TypeBox ships about 700 ES modules; loading them costs ~190 ms and ~29 MB of RSS here, one
// bundled file ~15 ms and ~8 MB (measured). src/http/schemas.ts falls back to the package itself
// when the bundle is missing.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
await build({
  stdin: { contents: "export { Type } from 'typebox';\nexport { Compile } from 'typebox/compile';\n", resolveDir: root, loader: 'js' },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outfile: `${root}vendor/typebox.mjs`,
  logLevel: 'warning',
});
