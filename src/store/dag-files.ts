// DagStore over the DAGs directory: one YAML file per DAG, addressed by file name without extension.
import { readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile, link, unlink } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { AppError, isValidDagName, type DagFile, type DagStore } from '../core/index.ts';
import { KeyedLock } from './keyed-lock.ts';
import { storageError } from './storage-full.ts';

const extensions = ['.yaml', '.yml'];

export class DagFiles implements DagStore {
  private readonly locks = new KeyedLock();
  private readonly writeListeners: Array<(fileName: string) => void> = [];

  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  async list(): Promise<DagFile[]> {
    const files = await Promise.all((await this.fileNames()).map((fileName) => this.read(fileName)));
    return files.filter((file): file is DagFile => file !== undefined);
  }

  async fileNames(): Promise<string[]> {
    const entries = await readdir(this.dir, { withFileTypes: true });
    const names = new Set<string>();
    for (const entry of entries) {
      if (!entry.isFile() && !entry.isSymbolicLink()) continue;
      const ext = extensions.find((candidate) => entry.name.endsWith(candidate));
      if (!ext) continue;
      const fileName = entry.name.slice(0, -ext.length);
      if (isValidDagName(fileName)) names.add(fileName);
    }
    return [...names].sort();
  }

  async read(fileName: string): Promise<DagFile | undefined> {
    // An invalid name is refused here (bad_request); readSync only answers that no such file exists.
    this.pathOf(fileName);
    return this.readSync(fileName);
  }

  readSync(fileName: string): DagFile | undefined {
    if (!isValidDagName(fileName)) return undefined;
    for (const path of this.candidates(fileName)) {
      try {
        // A definition is a small file, nearly always in the page cache: read at once rather than
        // through four thread-pool round trips on every start request.
        return { fileName, path, text: readFileSync(path, 'utf8') };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return undefined;
  }

  async exists(fileName: string): Promise<boolean> {
    return (await this.existingPath(fileName)) !== undefined;
  }

  write(fileName: string, text: string, mode: 'create' | 'replace'): Promise<void> {
    return this.locks.run([fileName], async () => {
      const existing = await this.existingPath(fileName);
      if (mode === 'create' && existing) throw new AppError('already_exists', `DAG ${fileName} already exists`);
      // A replace never brings back a file that a rename or removal took away meanwhile.
      if (mode === 'replace' && !existing) throw new AppError('not_found', `DAG ${fileName} not found`);
      const target = existing ?? this.pathOf(fileName);
      // Write beside the target and rename over it: a reader never sees half a file. The name is
      // unique, so that writers in other processes (or a hand edit) never share it.
      const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
      try {
        // A write the disk had no room for leaves part of the file: it is removed with the rest.
        await writeFile(temp, text, 'utf8');
        if (mode === 'create') await link(temp, target);
        else await rename(temp, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new AppError('already_exists', `DAG ${fileName} already exists`);
        throw storageError(error, `DAG ${fileName}`, this.dir);
      } finally {
        await unlink(temp).catch(() => undefined);
      }
      this.wrote(fileName);
    });
  }

  remove(fileName: string): Promise<boolean> {
    return this.locks.run([fileName], async () => {
      const existing = await this.existingPath(fileName);
      if (!existing) return false;
      await rm(existing, { force: true });
      this.wrote(fileName);
      return true;
    });
  }

  rename(from: string, to: string): Promise<void> {
    return this.locks.run([from, to], async () => {
      const source = await this.existingPath(from);
      if (!source) throw new AppError('not_found', `DAG ${from} not found`);
      if (await this.existingPath(to)) throw new AppError('already_exists', `DAG ${to} already exists`);
      const target = this.pathOf(to, source.endsWith('.yml') ? '.yml' : '.yaml');
      try {
        await link(source, target);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') throw new AppError('already_exists', `DAG ${to} already exists`);
        // Removed by hand between the check and the link.
        if (code === 'ENOENT') throw new AppError('not_found', `DAG ${from} not found`);
        throw storageError(error, `DAG ${to}`, this.dir);
      }
      await unlink(source).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      this.wrote(from, to);
    });
  }

  private pathOf(fileName: string, ext = '.yaml'): string {
    if (!isValidDagName(fileName)) throw new AppError('bad_request', `invalid DAG file name "${fileName}"`);
    return join(this.dir, `${fileName}${ext}`);
  }

  /** Whether a DAG file of that name exists; false for names that are not valid DAG names. */
  existsSync(fileName: string): boolean {
    if (!isValidDagName(fileName)) return false;
    return this.candidates(fileName).some((path) => statSync(path, { throwIfNoEntry: false })?.isFile() === true);
  }

  async paths(): Promise<Map<string, string>> {
    const entries = await readdir(this.dir, { withFileTypes: true });
    const paths = new Map<string, string>();
    for (const entry of entries) {
      if (!entry.isFile() && !entry.isSymbolicLink()) continue;
      const ext = extensions.find((candidate) => entry.name.endsWith(candidate));
      if (!ext) continue;
      const fileName = entry.name.slice(0, -ext.length);
      // readSync's choice when both exist: the first extension.
      if (isValidDagName(fileName) && (ext === extensions[0] || !paths.has(fileName))) paths.set(fileName, `${this.dir}/${entry.name}`);
    }
    return new Map([...paths].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  stamp(path: string): string | undefined {
    const stats = statSync(path, { throwIfNoEntry: false });
    // Times alone can miss an edit of the same size within a clock tick: the directory watcher tells those.
    return stats?.isFile() ? `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}` : undefined;
  }

  directoryStamp(): string | undefined {
    // An entry added, removed or renamed moves the directory's times (a file edited in place does not).
    const stats = statSync(this.dir, { throwIfNoEntry: false });
    return stats ? `${stats.ino}:${stats.mtimeMs}:${stats.ctimeMs}` : undefined;
  }

  onWrite(listener: (fileName: string) => void): void {
    this.writeListeners.push(listener);
  }

  settled(fileName: string): Promise<void> {
    return this.locks.run([fileName], async () => undefined);
  }

  private wrote(...fileNames: string[]): void {
    for (const fileName of fileNames) for (const listener of this.writeListeners) listener(fileName);
  }

  private candidates(fileName: string): string[] {
    return extensions.map((ext) => this.pathOf(fileName, ext));
  }

  private async existingPath(fileName: string): Promise<string | undefined> {
    for (const path of this.candidates(fileName)) {
      try {
        if ((await stat(path)).isFile()) return path;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return undefined;
  }
}
