// Given to node with --import: appends the URL of every module the process (and each worker thread
// or child it starts with the same flags) loads to the file named by TROUPE_TEST_LOADED_MODULES.
// The append happens in the loader's own thread, so what is recorded does not depend on the
// program's ending cleanly.
import { register } from 'node:module';

register(`data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, nextLoad) {
  if (process.env.TROUPE_TEST_LOADED_MODULES) appendFileSync(process.env.TROUPE_TEST_LOADED_MODULES, url + '\\n');
  return nextLoad(url, context);
}
`)}`);
