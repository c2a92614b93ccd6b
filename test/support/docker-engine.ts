// A real Docker engine for the tests: dockerd with its own data root, exec root and unix socket
// in a temporary folder (vfs storage, no iptables, no bridge: containers get no network), and a
// busybox image imported from a rootfs made of Debian's busybox-static, since no registry is
// reachable here. One engine per test file; stop() ends it and removes its folder.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, openSync, closeSync, mkdirSync, readFileSync, symlinkSync, copyFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import Docker from 'dockerode';

/** The image every test container runs: busybox, with `sh` as its default command. */
export const BUSYBOX = 'troupe-test/busybox:latest';

export interface DockerEngine {
  /** DOCKER_HOST for this engine: unix://<folder>/docker.sock */
  host: string;
  docker: Docker;
  /** Imports the busybox rootfs again under `tag`, with Dockerfile-style `changes` (CMD, ENV, HEALTHCHECK...). */
  importBusybox(tag: string, changes?: string[]): Promise<void>;
  stop(): Promise<void>;
}

const SEARCH = ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/sbin', '/usr/local/bin'];

function findProgram(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), ...SEARCH]) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), fsConstants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Why a Docker engine cannot run on this machine, or undefined when it can. */
export function dockerMissing(): string | undefined {
  if (!findProgram('dockerd')) return 'dockerd is not installed (apt-get install docker.io)';
  if (!findBusybox()) return 'busybox-static is not installed (apt-get install busybox-static; the busybox package\'s binary is not static)';
  if (process.getuid?.() !== 0) return 'dockerd needs root';
  return undefined;
}

/** busybox-static's binary: the image has no libc, so a dynamically linked busybox cannot run in it. */
function findBusybox(): string | undefined {
  for (const path of ['/bin/busybox', '/usr/bin/busybox']) {
    try {
      accessSync(path, fsConstants.X_OK);
      if (isStatic(readFileSync(path))) return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** An ELF64 little-endian binary without a program interpreter (PT_INTERP) is statically linked. */
function isStatic(elf: Buffer): boolean {
  if (elf.length < 64 || elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) return false;
  const offset = Number(elf.readBigUInt64LE(32));
  const size = elf.readUInt16LE(54);
  const count = elf.readUInt16LE(56);
  for (let index = 0; index < count; index++) {
    if (elf.readUInt32LE(offset + index * size) === 3) return false;
  }
  return true;
}

export async function startDockerEngine(): Promise<DockerEngine> {
  const missing = dockerMissing();
  if (missing) throw new Error(`no Docker engine: ${missing}`);
  // Short paths: containerd's socket lives under the exec root, and a unix socket path has 107 bytes at most.
  const dir = await mkdtemp('/tmp/troupe-dockerd-');
  const socket = join(dir, 'docker.sock');
  const logFd = openSync(join(dir, 'dockerd.log'), 'a');
  const daemon: ChildProcess = spawn(findProgram('dockerd')!, [
    '--storage-driver', 'vfs', '--iptables=false', '--ip-masq=false', '--bridge=none',
    '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec'),
    '--pidfile', join(dir, 'dockerd.pid'), '--host', `unix://${socket}`,
  ], { stdio: ['ignore', logFd, logFd], detached: true });
  closeSync(logFd);
  let exited = false;
  const exit = new Promise<void>((resolve) => daemon.once('exit', () => {
    exited = true;
    resolve();
  }));
  const docker = new Docker({ socketPath: socket });
  const stop = async () => {
    if (!exited) {
      daemon.kill('SIGTERM');
      const slow = setTimeout(() => {
        // dockerd and the containerd it started share its process group.
        try { process.kill(-daemon.pid!, 'SIGKILL'); } catch { /* gone */ }
      }, 20_000);
      await exit;
      clearTimeout(slow);
    }
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (exited) throw new Error(`dockerd exited at start: ${readFileSync(join(dir, 'dockerd.log'), 'utf8').slice(-2000)}`);
      try {
        await docker.ping();
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`dockerd did not answer within 60 s: ${readFileSync(join(dir, 'dockerd.log'), 'utf8').slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const rootfs = buildRootfs(dir);
    const importBusybox = async (tag: string, changes: string[] = []) => {
      const [repo, version = 'latest'] = tag.split(':');
      const tar = spawn('tar', ['-C', rootfs, '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const stream = await docker.importImage(tar.stdout as unknown as string, { repo, tag: version, changes } as object);
      await new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (error: Error | null, events: Array<{ error?: string }>) => {
        const failure = error?.message ?? events.find((event) => event.error)?.error;
        if (failure) reject(new Error(`docker import ${tag}: ${failure}`));
        else resolve();
      }));
    };
    await importBusybox(BUSYBOX, ['CMD ["sh"]']);
    return { host: `unix://${socket}`, docker, importBusybox, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A root filesystem of busybox-static and a link for each of its applets, in /bin. */
function buildRootfs(dir: string): string {
  const rootfs = join(dir, 'rootfs');
  for (const sub of ['bin', 'tmp', 'etc', 'root']) mkdirSync(join(rootfs, sub), { recursive: true });
  copyFileSync(findBusybox()!, join(rootfs, 'bin', 'busybox'));
  const applets = spawnSync(join(rootfs, 'bin', 'busybox'), ['--list'], { encoding: 'utf8' }).stdout.split('\n').filter((name) => name && name !== 'busybox');
  for (const applet of applets) symlinkSync('busybox', join(rootfs, 'bin', applet));
  // Users a definition's `user` can name.
  writeFileSync(join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n');
  writeFileSync(join(rootfs, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
  return rootfs;
}
