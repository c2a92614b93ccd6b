// Executor type `dag-container`: the run's DAG-level container (definition format: DAG-level container), started once
// before its first step (`action: start`) and removed after its last handler (`action: remove`),
// unless keepContainer. The run dispatches both; steps exec into it (container.executor.ts).
import { constants as osConstants } from 'node:os';
import type Docker from 'dockerode';
import type { StepResult } from '../../core/index.ts';
import type { WorkerTask } from '../protocol.ts';
import { containerEnv, dagCreateOptions } from './create-options.ts';
import { MANAGED_LABEL, daemonMessage, deadline, docker, isNotFound, connectDocker } from './docker.ts';
import { ensureImage } from './image-pull.ts';
import { READINESS_LIMIT_MS, waitReady } from './readiness.ts';
import { Stops } from '../stops.ts';
import { workerLog } from '../../logging/worker-log.ts';

/**
 * The readiness limit; TROUPE_CONTAINER_READY_TIMEOUT_MS shortens it for tests, which could not
 * wait two minutes to see it reached.
 */
function readinessLimitMs(): number {
  const value = Number(process.env.TROUPE_CONTAINER_READY_TIMEOUT_MS);
  return Number.isInteger(value) && value > 0 ? value : READINESS_LIMIT_MS;
}

export async function runDagContainer(task: WorkerTask): Promise<StepResult> {
  await connectDocker();
  const shared = task.services?.container;
  if (!shared) return { kind: 'ok', exitCode: 1, error: 'the DAG has no container' };
  try {
    if (task.executor.config.action === 'remove') return await remove(shared.name, shared.spec.keepContainer);
    return await start(task, shared.spec, shared.name);
  } catch (error) {
    // Nothing is thrown out of a worker.
    return { kind: 'ok', exitCode: 1, error: daemonMessage(error) };
  }
}

type Shared = NonNullable<NonNullable<WorkerTask['services']>['container']>;

async function start(task: WorkerTask, spec: Shared['spec'], name: string): Promise<StepResult> {
  const stops = new Stops(task.port);
  let container: Docker.Container | undefined;
  const fail = async (error: string): Promise<StepResult> => {
    // What was made for a run that cannot use it goes, unless the definition keeps its container.
    if (container && (!spec.keepContainer || stops.requested)) await removeQuietly(container);
    if (stops.requested) {
      const signal = stops.first!.signal;
      return { kind: 'ok', exitCode: 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0), signal, error: `signal: ${signal}` };
    }
    return { kind: 'ok', exitCode: 1, error };
  };
  try {
    const create = dagCreateOptions(spec, name, containerEnv(task.env, spec.env));
    if ('error' in create) return await fail(create.error);
    const pulled = await ensureImage(spec.image!, spec.pullPolicy, spec.platform, task.services?.registryAuths, stops.signal);
    if (pulled !== undefined || stops.requested) return await fail(pulled ?? 'stopped');
    await removeLeftover(name);
    const { name: _name, ...body } = create.options;
    try {
      container = await docker().createContainer({ _query: { name, ...(spec.platform ? { platform: spec.platform } : {}) }, _body: body, ...deadline() } as Docker.ContainerCreateOptions);
      if (stops.requested) return await fail('stopped');
      await container.start(deadline());
    } catch (error) {
      return await fail(daemonMessage(error));
    }
    const notReady = await waitReady(container, { waitFor: spec.waitFor, logPattern: spec.logPattern, limitMs: readinessLimitMs(), signal: stops.signal });
    if (notReady !== undefined || stops.requested) return await fail(notReady ?? 'stopped');
    return { kind: 'ok', exitCode: 0 };
  } finally {
    stops.detach();
  }
}

/** A container of this name that troupe made (an attempt that ended with the server) is in the way. */
async function removeLeftover(name: string): Promise<void> {
  try {
    const info = await docker().getContainer(name).inspect(deadline());
    if (info.Config.Labels?.[MANAGED_LABEL] === 'true') await docker().getContainer(info.Id).remove({ force: true, ...deadline() } as Docker.ContainerRemoveOptions);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

async function removeQuietly(container: Docker.Container): Promise<void> {
  await container.remove({ force: true, v: true, ...deadline() } as Docker.ContainerRemoveOptions).catch((error: unknown) => {
    workerLog('error', { container: container.id, error: daemonMessage(error) }, 'a container was not removed');
  });
}

/** keepContainer keeps it, stopped, for inspection (as Dagu does); otherwise it goes with its anonymous volumes. */
async function remove(name: string, keep: boolean): Promise<StepResult> {
  const container = docker().getContainer(name);
  try {
    if (keep) await container.stop({ t: 5, ...deadline() });
    else await container.remove({ force: true, v: true, ...deadline() } as Docker.ContainerRemoveOptions);
  } catch (error) {
    // Gone already (removed by hand), or stopped already: nothing is left to do.
    const status = (error as { statusCode?: number }).statusCode;
    if (!isNotFound(error) && status !== 304) return { kind: 'ok', exitCode: 1, error: daemonMessage(error) };
  }
  return { kind: 'ok', exitCode: 0 };
}
