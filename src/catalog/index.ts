export { Definitions } from './definitions.ts';
export { DagFileChanges } from './dag-changes.ts';
export { DagsWatcher } from './dags-watcher.ts';
export { usableDag } from './usable-dag.ts';
export type { CatalogEntry, DagListing } from './dag-catalog.ts';
export { calledDagFiles } from './called-dags.ts';
