// Tells which DAG files changed in the DAGs directory: fs.watch (inotify on Linux) as changes
// happen, and a slow rescan as the safety net for what a watch misses (a network file system, an
// overflowed event queue, a watch that failed). It reads no file: the cron scheduler does.
import { watch, type FSWatcher } from 'node:fs';
import { isValidDagName } from '../core/index.ts';
import { log as logger } from '../logging/index.ts';

export interface DagsWatcherOptions {
  dir: string;
  onChange: (fileName: string) => void;
  /** Told at once of every event of a file, before it settles: what caches the file forgets it here. */
  onNoticed?: (fileName: string) => void;
  onRescan: () => void;
  /** Told true once the watch runs, false when it gives up: until then and after, changes are found by looking. */
  onWatching?: (watching: boolean) => void;
  /** Default one minute. */
  rescanEveryMs?: number;
  /** Events of one file closer together than this are one change: an editor writes a file in several steps. Default 20 ms. */
  settleMs?: number;
  log?: (line: string) => void;
}

const RESCAN_EVERY_MS = 60_000;
const SETTLE_MS = 20;

export class DagsWatcher {
  private watcher: FSWatcher | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private readonly settling = new Map<string, NodeJS.Timeout>();

  constructor(private readonly options: DagsWatcherOptions) {}

  start(): void {
    const everyMs = this.options.rescanEveryMs ?? RESCAN_EVERY_MS;
    const log = this.options.log ?? ((line: string) => logger.warn(line));
    const giveUp = (error: Error) => {
      log(`troupe: cannot watch the DAGs directory (${error.message}); files changed by hand are found by a rescan every ${everyMs / 1000} s`);
      this.watcher?.close();
      this.watcher = undefined;
      this.options.onWatching?.(false);
    };
    try {
      this.watcher = watch(this.options.dir, { persistent: false }, (_event, entry) => this.noticed(entry));
      this.watcher.on('error', giveUp);
      this.options.onWatching?.(true);
    } catch (error) {
      giveUp(error as Error);
    }
    this.rescanTimer = setInterval(() => this.options.onRescan(), everyMs).unref();
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    clearInterval(this.rescanTimer);
    for (const timer of this.settling.values()) clearTimeout(timer);
    this.settling.clear();
  }

  private noticed(entry: string | null): void {
    // Some platforms do not say which file changed.
    if (entry === null) return this.options.onRescan();
    const fileName = dagFileName(entry);
    if (fileName === undefined) return;
    this.options.onNoticed?.(fileName);
    clearTimeout(this.settling.get(fileName));
    this.settling.set(fileName, setTimeout(() => {
      this.settling.delete(fileName);
      if (this.watcher) this.options.onChange(fileName);
    }, this.options.settleMs ?? SETTLE_MS).unref());
  }
}

/** The DAG a directory entry is the file of; undefined for anything else (the temporary files of a write). */
function dagFileName(entry: string): string | undefined {
  const match = /^(.+)\.ya?ml$/.exec(entry);
  return match && isValidDagName(match[1]) ? match[1] : undefined;
}
