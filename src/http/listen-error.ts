// Why the server cannot take its address, in words an operator can act on. uWebSockets.js says
// only that it failed: the same address is then tried with node:net, which names the reason.
import { createServer } from 'node:net';

/** The error for a listen that failed with `code` (EADDRINUSE...), naming the address and what to do. */
export function listenError(host: string, port: number, code: string | undefined): Error {
  const address = `${host}:${port}`;
  const reasons: Record<string, string> = {
    EADDRINUSE: `port ${port} on ${host} is in use by another process; stop it or choose another port (--port, TROUPE_PORT)`,
    EACCES: `permission denied for ${address}: ports below 1024 need root or CAP_NET_BIND_SERVICE; choose another port (--port, TROUPE_PORT)`,
    EADDRNOTAVAIL: `${host} is not an address of this machine; choose another host (--host, TROUPE_HOST)`,
    ENOTFOUND: `host ${host} is not known; choose another host (--host, TROUPE_HOST)`,
  };
  const reason = code === undefined ? undefined : reasons[code] ?? `${code}`;
  return new Error(`cannot listen on ${address}${reason ? `: ${reason}` : ''}`);
}

/** The code node:net meets listening on the address uWebSockets.js could not take; undefined if it can. */
export function probeListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}
