// CronStateStore as one small JSON file in the data directory, replaced whole by a rename.
import { randomUUID } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CronState, CronStateStore } from '../core/index.ts';

export class CronStateFile implements CronStateStore {
  readonly path: string;
  private tail: Promise<void> = Promise.resolve();

  constructor(dataDir: string) {
    this.path = join(dataDir, 'cron-state.json');
  }

  async read(): Promise<CronState | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const state = JSON.parse(text) as Partial<CronState>;
      if (typeof state.handedUpTo !== 'number') return undefined;
      return { handedUpTo: state.handedUpTo, schedules: state.schedules ?? {}, missed: state.missed ?? {}, unfinished: state.unfinished ?? [] };
    } catch {
      // Written by a rename, so never half a file; anything else (a hand edit) is as if it were absent.
      return undefined;
    }
  }

  write(state: CronState): Promise<void> {
    const text = JSON.stringify(state);
    const next = this.tail.then(async () => {
      const temp = `${this.path}.${process.pid}.${randomUUID()}.tmp`;
      try {
        // A write the disk had no room for leaves part of the file: it is removed all the same.
        await writeFile(temp, text, { encoding: 'utf8', mode: 0o600 });
        await rename(temp, this.path);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
    });
    this.tail = next.catch(() => undefined);
    return next;
  }
}
