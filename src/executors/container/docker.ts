// The Docker engine client of this worker thread (dockerode), and what the container executors
// share: the label that marks what troupe creates, per-call deadlines, the daemon's own messages.
import type Docker from 'dockerode';

/** Every container troupe creates carries this label: a leftover is found by it. */
export const MANAGED_LABEL = 'org.troupe.managed';

/** A call that should answer at once (inspect, create, start, kill, remove) gets this long. */
export const CALL_TIMEOUT_MS = 30_000;

let client: Docker | undefined;

/**
 * One client per worker thread, made by the first container step: it reads DOCKER_HOST (and
 * DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) from the environment the thread was started with, else the
 * default socket. dockerode is loaded then, not with the thread: it costs a thread about 130 ms and
 * 25 MB, which only threads that run containers should pay.
 */
export async function connectDocker(): Promise<Docker> {
  if (!client) {
    const { default: Dockerode } = await import('dockerode');
    client ??= new Dockerode();
  }
  return client;
}

/** The client connectDocker made; the executors' entry points call that first. */
export function docker(): Docker {
  if (!client) throw new Error('the Docker client is not connected yet');
  return client;
}

/** Whether the daemon runs on this machine (a unix socket), so a process it runs can be signalled from here. */
export function daemonIsLocal(): boolean {
  const host = process.env.DOCKER_HOST;
  return host === undefined || host === '' || host.startsWith('unix://');
}

export function deadline(): { abortSignal: AbortSignal } {
  return { abortSignal: AbortSignal.timeout(CALL_TIMEOUT_MS) };
}

/** The daemon's message for a failed call (dockerode prefixes its own "(HTTP code 404) ..." otherwise). */
export function daemonMessage(error: unknown): string {
  const failure = error as { json?: { message?: unknown } | null; message?: string; name?: string };
  if (failure?.json && typeof failure.json.message === 'string') return failure.json.message.trim();
  if (failure?.name === 'TimeoutError' || failure?.name === 'AbortError') return `the Docker engine did not answer within ${CALL_TIMEOUT_MS / 1000} s`;
  const message = failure?.message ?? String(error);
  return message.replace(/^\(HTTP code \d+\) [^-]*- /, '').trim();
}

/** Whether a failed call means the object (container, image, exec) does not exist. */
export function isNotFound(error: unknown): boolean {
  return (error as { statusCode?: number })?.statusCode === 404;
}

/** For the few dockerode calls that take no abort signal: gives up after CALL_TIMEOUT_MS. */
export async function withinDeadline<T>(call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), CALL_TIMEOUT_MS);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the demultiplexer writes a frame's payload to. */
export interface ChunkSink {
  write(chunk: Buffer | string): boolean;
}

/** Splits the daemon's multiplexed stream (no TTY) into the step's stdout and stderr. */
export function demultiplex(stream: NodeJS.ReadableStream, stdout: ChunkSink, stderr: ChunkSink): void {
  docker().modem.demuxStream(stream, stdout as unknown as NodeJS.WritableStream, stderr as unknown as NodeJS.WritableStream);
}
