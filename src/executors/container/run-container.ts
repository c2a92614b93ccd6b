// One command in a new container: created, attached (before it starts, so no output is lost),
// started, waited for, then removed unless the definition keeps it. A stop sends the step's
// signal to the container, then SIGKILL when the cleanup time is over.
import type Docker from 'dockerode';
import { demultiplex, docker, daemonMessage, deadline } from './docker.ts';
import type { StepOutput } from './step-output.ts';
import type { Stops } from '../stops.ts';
import type { Outcome } from './outcome.ts';
import { workerLog } from '../../logging/worker-log.ts';

/** After the container exits, its attached stream gets this long to deliver the last output. */
const STREAM_GRACE_MS = 2_000;

export async function runInNewContainer(options: Docker.ContainerCreateOptions, output: StepOutput, stops: Stops, keep: boolean): Promise<Outcome> {
  if (stops.requested) return { kind: 'stopped', signal: stops.first!.signal };
  let container: Docker.Container;
  try {
    // The name and platform go in the query string, the rest (env with secrets) in the body only.
    const { name, platform, ...body } = options;
    container = await docker().createContainer({ _query: { ...(name ? { name } : {}), ...(platform ? { platform } : {}) }, _body: body, ...deadline() } as Docker.ContainerCreateOptions);
  } catch (error) {
    return { kind: 'failed', message: daemonMessage(error) };
  }
  try {
    return await attachStartWait(container, output, stops);
  } finally {
    if (!keep) await container.remove({ force: true, v: true, ...deadline() } as Docker.ContainerRemoveOptions).catch((error: unknown) => {
      workerLog('error', { container: container.id, error: daemonMessage(error) }, 'a container was not removed');
    });
  }
}

async function attachStartWait(container: Docker.Container, output: StepOutput, stops: Stops): Promise<Outcome> {
  let stream: NodeJS.ReadWriteStream;
  try {
    stream = await container.attach({ stream: true, stdout: true, stderr: true, ...deadline() });
  } catch (error) {
    return { kind: 'failed', message: daemonMessage(error) };
  }
  const ended = new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  demultiplex(stream, output.stdout, output.stderr);
  if (stops.requested) return { kind: 'stopped', signal: stops.first!.signal };
  try {
    await container.start(deadline());
  } catch (error) {
    return { kind: 'failed', message: daemonMessage(error) };
  }
  let stoppedBy: string | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const kill = (signal: string) => container.kill({ signal, ...deadline() }).catch(() => {
    // The container has exited already.
  });
  stops.handle((message) => {
    stoppedBy ??= message.signal;
    void kill(message.signal);
    killTimer ??= setTimeout(() => void kill('SIGKILL'), message.cleanupMs);
  });
  try {
    const status = await container.wait() as { StatusCode: number };
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, STREAM_GRACE_MS)))]);
    clearTimeout(timer);
    if (stoppedBy !== undefined) return { kind: 'stopped', signal: stoppedBy };
    return { kind: 'exited', exitCode: status.StatusCode };
  } catch (error) {
    return { kind: 'failed', message: daemonMessage(error) };
  } finally {
    stops.handle(undefined);
    clearTimeout(killTimer);
    (stream as unknown as { destroy?: () => void }).destroy?.();
  }
}
