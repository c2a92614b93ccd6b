// npm install hook: builds the posix_spawn addon (native/spawn.c) with npm's node-gyp. When it
// cannot be built (no compiler, not Linux), troupe still works: steps start through
// child_process, which costs about twice as much per step. `troupe` says which one it uses.
import { spawnSync } from 'node:child_process';

if (process.platform !== 'linux') {
  console.warn('troupe: the posix_spawn addon is Linux-only; steps will start through child_process');
  process.exit(0);
}
const nodeGyp = process.env.npm_config_node_gyp;
const result = nodeGyp
  ? spawnSync(process.execPath, [nodeGyp, 'rebuild'], { stdio: 'inherit' })
  : spawnSync('node-gyp', ['rebuild'], { stdio: 'inherit', shell: true });
if (result.status !== 0) {
  console.warn('troupe: could not build the posix_spawn addon; steps will start through child_process (slower)');
}
