// Loopback ports for the servers tests start (sshd, redis-server): one free now, and the wait
// until a started server accepts connections on its own.
import type { ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Until `child` accepts connections on `port`; its exiting first (a bad config, a taken port) or the deadline fails with its log. */
export async function listening(name: string, port: number, child: ChildProcess, log: () => string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port}: ${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
