// The home is private to the user troupe runs as: the store holds the session signing secret, users'
// password digests and API key digests, and the logs hold what steps printed. Folders troupe makes
// are 0700; data/ and logs/ found looser are tightened at start (and the store's files to 0600).
// The home itself and dags/ are only named when looser: definitions may be shared on purpose
// (a group that edits them), and tightening those would take that away unasked.
import { chmod, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface HomeFolders {
  home: string;
  dagsDir: string;
  dataDir: string;
  logDir: string;
}

const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

/** What others than the owner may do with it: the group and other bits of its mode. */
const opened = (mode: number) => mode & 0o077;

/** Makes the folders (0700 where new) and tightens data/ and logs/. Answers the warning line to log, if any. */
export async function makeHomePrivate(folders: HomeFolders): Promise<string | undefined> {
  for (const dir of [folders.home, folders.dagsDir, folders.dataDir, folders.logDir]) {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  }
  await tightenStore(folders.dataDir);
  await tighten(folders.logDir, PRIVATE_DIR);
  const looser: string[] = [];
  for (const dir of [folders.home, folders.dagsDir]) {
    const mode = (await stat(dir)).mode;
    if (opened(mode)) looser.push(`${dir} (${(mode & 0o777).toString(8)})`);
  }
  if (looser.length === 0) return undefined;
  return `troupe: readable by other users of this machine: ${looser.join(', ')}; data/ and logs/ are kept private (0700) whatever their parent; chmod 700 the rest unless others are meant to read the DAG definitions`;
}

/** The store's folder and the files directly in it (data.mdb, lock.mdb, the home lock, the cron state). */
async function tightenStore(dataDir: string): Promise<void> {
  await tighten(dataDir, PRIVATE_DIR);
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    if (entry.isFile()) await tighten(join(dataDir, entry.name), PRIVATE_FILE);
    else if (entry.isDirectory()) await tighten(join(dataDir, entry.name), PRIVATE_DIR);
  }
}

async function tighten(path: string, mode: number): Promise<void> {
  const current = (await stat(path)).mode;
  if (opened(current)) await chmod(path, (current & 0o700) | (mode & 0o700));
}

/** After the store has opened: files it made just now (LMDB's, at 0644 under the usual umask) are made private too. */
export const tightenStoreFiles = tightenStore;
