// What the troupe command needs of a home besides its engine: definitions checked as the server
// checks them (validate, dry). Its cleanup goes through the engine's retention sweeper, as the API's does.
// The two modules are imported by their files, not through their folders' index.ts: the folders'
// other modules bring LMDB and the file watcher, which a check never uses, into every `validate`.
import { Definitions } from './catalog/definitions.ts';
import type { ParseResult } from './definition/index.ts';
import { DagFiles } from './store/dag-files.ts';

/** A definition checked as `POST /dags/validate` checks it; `dir`: where the DAGs it calls are. */
export function checkDefinition(dir: string, spec: string, options: { fileName: string }): Promise<{ result: ParseResult; errors: string[] }> {
  return new Definitions(new DagFiles(dir)).check(spec, { fileName: options.fileName, defaultName: options.fileName });
}
