// Waits until a started DAG-level container is ready (definition format: DAG-level container): running, or healthy
// when its image has a healthcheck, then, with logPattern, until a log line matches. The limit is
// 120 s; its error names the last state seen.
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { daemonMessage, deadline, demultiplex } from './docker.ts';

export const READINESS_LIMIT_MS = 120_000;
const POLL_MS = 250;

export interface ReadinessOptions {
  waitFor: 'running' | 'healthy';
  logPattern?: string;
  limitMs: number;
  signal: AbortSignal;
}

/** Undefined when ready; else why not. */
export async function waitReady(container: Docker.Container, options: ReadinessOptions): Promise<string | undefined> {
  const started = Date.now();
  let last = 'unknown';
  const timedOut = () => Date.now() - started >= options.limitMs;
  const limitText = `${Math.round(options.limitMs / 100) / 10} s`;
  for (;;) {
    if (options.signal.aborted) return 'stopped while waiting for the container';
    let info: Docker.ContainerInspectInfo;
    try {
      info = await container.inspect(deadline());
    } catch (error) {
      return daemonMessage(error);
    }
    const state = info.State;
    if (state.Status === 'exited' || state.Status === 'dead') return `the container stopped before it was ready (status ${state.Status}, exit code ${state.ExitCode})`;
    const health = (state as { Health?: { Status?: string } }).Health?.Status;
    last = health !== undefined && options.waitFor === 'healthy' ? `status ${state.Status}, health ${health}` : `status ${state.Status}`;
    // An image without a healthcheck cannot be healthy: running is as ready as it gets (as in Dagu).
    const ready = options.waitFor === 'healthy' && health !== undefined ? health === 'healthy' : state.Running;
    if (ready) break;
    if (timedOut()) return `the container was not ${options.waitFor} after ${limitText}; last state: ${last}`;
    await sleep(POLL_MS, options.signal);
  }
  if (options.logPattern === undefined || options.logPattern === '') return undefined;
  return waitForLogLine(container, new RegExp(options.logPattern), options.logPattern, Math.max(0, options.limitMs - (Date.now() - started)), limitText, options.signal);
}

async function waitForLogLine(container: Docker.Container, pattern: RegExp, source: string, remainingMs: number, limitText: string, signal: AbortSignal): Promise<string | undefined> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal.addEventListener('abort', abort, { once: true });
  const timer = setTimeout(abort, remainingMs);
  try {
    const stream = await container.logs({ follow: true, stdout: true, stderr: true, abortSignal: controller.signal }) as unknown as NodeJS.ReadableStream;
    const lines = new PassThrough();
    demultiplex(stream, lines, lines);
    const matched = await new Promise<boolean>((resolve) => {
      let pending = '';
      const onData = (chunk: Buffer) => {
        pending += chunk.toString('utf8');
        const parts = pending.split('\n');
        pending = parts.pop()!;
        if (parts.some((line) => pattern.test(line))) resolve(true);
      };
      lines.on('data', onData);
      const end = () => resolve(pattern.test(pending));
      stream.once('end', end);
      stream.once('close', end);
      stream.once('error', end);
      controller.signal.addEventListener('abort', () => resolve(false), { once: true });
    });
    (stream as unknown as { destroy?: () => void }).destroy?.();
    if (matched) return undefined;
  } catch (error) {
    if (!controller.signal.aborted) return daemonMessage(error);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', abort);
  }
  if (signal.aborted) return 'stopped while waiting for the container';
  const state = await container.inspect(deadline()).then((info) => `status ${info.State.Status}${info.State.Running ? '' : `, exit code ${info.State.ExitCode}`}`, (error) => daemonMessage(error));
  if (controller.signal.aborted) return `no log line matched "${source}" after ${limitText}; last state: ${state}`;
  return `the container's log ended before a line matched "${source}"; last state: ${state}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
