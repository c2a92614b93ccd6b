// The container executor (definition format: container executor; types `docker` and `container`): a step runs in a
// new container made from `image`, or by exec in the running container `containerName` names, or,
// when the DAG has its own container, by exec in that one (the step's config is ignored).
import { constants as osConstants } from 'node:os';
import type Docker from 'dockerode';
import type { StepResult } from '../../core/index.ts';
import type { WorkerTask } from '../protocol.ts';
import { containerEnv, stepCommands, stepCreateOptions, type StepContainerConfig } from './create-options.ts';
import { MANAGED_LABEL, daemonMessage, deadline, docker, isNotFound, connectDocker } from './docker.ts';
import { execInContainer, type ExecSettings } from './exec-in-container.ts';
import { ensureImage } from './image-pull.ts';
import { runInNewContainer } from './run-container.ts';
import { StepOutput } from './step-output.ts';
import { Stops } from '../stops.ts';
import { withStderrTail } from '../stderr-tail.ts';
import type { Outcome } from './outcome.ts';

/** Where a step's commands run: by exec in a running container, or each in a new one. */
type Target =
  | { kind: 'exec'; containerId: string; settings: ExecSettings }
  | { kind: 'new'; config: StepContainerConfig; name?: string }
  | { kind: 'failed'; message: string };

export async function runContainerStep(task: WorkerTask): Promise<StepResult> {
  await connectDocker();
  const stops = new Stops(task.port);
  const output = new StepOutput(task);
  try {
    const commands = stepCommands(task);
    if (commands.kind === 'invalid') return failed(output, commands.message);
    const target = await targetOf(task);
    if (target.kind === 'failed') return failed(output, target.message);
    if (target.kind === 'exec' && commands.kind === 'imageDefault') return failed(output, 'a step run by exec in a running container needs a command');
    if (target.kind === 'new') {
      const pulled = await ensureImage(target.config.image!, target.config.pull ?? 'missing', target.config.platform, task.services?.registryAuths, stops.signal);
      if (stops.requested) return stopped(stops.first!.signal);
      if (pulled !== undefined) return failed(output, pulled);
    }
    const argvs = commands.kind === 'argv' ? commands.argvs : [undefined];
    const run = (argv: string[] | undefined): Promise<Outcome> => target.kind === 'exec'
      ? execInContainer(target.containerId, argv!, target.settings, output, stops)
      : runInNewContainer(newContainer(task, target.config, argv, target.name), output, stops, target.config.autoRemove === false);
    for (const [index, argv] of argvs.entries()) {
      const outcome = await run(argv);
      const result = resultOf(outcome, output);
      const last = index === argvs.length - 1;
      if (result.kind === 'ok' && result.exitCode === 0 && result.error === undefined && !last) continue;
      if (argvs.length > 1 && result.kind === 'ok' && outcome.kind === 'exited' && result.error !== undefined) {
        result.error = `command ${index + 1} of ${argvs.length} failed (${task.commands![index]}): ${result.error}`;
      }
      return result;
    }
    return { kind: 'ok', exitCode: 0 };
  } catch (error) {
    // Nothing is thrown out of a worker: an unexpected failure is the step's.
    return failed(output, daemonMessage(error));
  } finally {
    stops.detach();
  }
}

function newContainer(task: WorkerTask, config: StepContainerConfig, argv: string[] | undefined, name: string | undefined): Docker.ContainerCreateOptions {
  const options = stepCreateOptions(config, argv, containerEnv(task.env, config.container?.env), name);
  return config.platform ? { ...options, platform: config.platform } : options;
}

/**
 * The rules of 5.1: containerName alone needs a running container; with an image too, a running
 * container of that name is used, else one is made from the image under that name (a stopped one
 * that troupe made before is removed first; another is the user's and is left alone).
 */
async function targetOf(task: WorkerTask): Promise<Target> {
  const shared = task.services?.container;
  // An exec's env is added to the container's: the container's own env is given again so that it
  // still wins over the run's variables, as a step's config env does.
  if (shared) {
    return { kind: 'exec', containerId: shared.name, settings: { Env: containerEnv(task.env, shared.spec.env), User: shared.spec.user, WorkingDir: shared.spec.workingDir } };
  }
  const config = task.executor.config as StepContainerConfig;
  const name = config.containerName?.trim() || undefined;
  if (name === undefined) {
    if (!config.image) return { kind: 'failed', message: 'a container executor needs image or containerName' };
    return { kind: 'new', config };
  }
  let info: Docker.ContainerInspectInfo | undefined;
  try {
    info = await docker().getContainer(name).inspect(deadline());
  } catch (error) {
    if (!isNotFound(error)) return { kind: 'failed', message: daemonMessage(error) };
  }
  if (info?.State.Running) {
    return { kind: 'exec', containerId: info.Id, settings: { Env: containerEnv(task.env, config.exec?.env), User: config.exec?.user, WorkingDir: config.exec?.workingDir } };
  }
  if (!config.image) return { kind: 'failed', message: info ? `container "${name}" is not running (${info.State.Status})` : `container "${name}" does not exist` };
  if (info) {
    if (info.Config.Labels?.[MANAGED_LABEL] !== 'true') return { kind: 'failed', message: `container "${name}" exists and is not running (${info.State.Status}); it was not made by troupe, so it is left as it is` };
    try {
      await docker().getContainer(info.Id).remove({ force: true, ...deadline() } as Docker.ContainerRemoveOptions);
    } catch (error) {
      return { kind: 'failed', message: daemonMessage(error) };
    }
  }
  return { kind: 'new', config, name };
}

function resultOf(outcome: Outcome, output: StepOutput): StepResult {
  if (outcome.kind === 'failed') return failed(output, outcome.message);
  if (outcome.kind === 'stopped') {
    output.finish();
    return stopped(outcome.signal);
  }
  const { output: captured, overflow } = output.finish();
  const result: StepResult = { kind: 'ok', exitCode: outcome.exitCode };
  // As Dagu's docker executor: the end of the container's stderr follows the exit status.
  if (outcome.exitCode !== 0) result.error = withStderrTail(`exit status ${outcome.exitCode}`, output.stderrPath, output.stderr.written);
  if (overflow) result.error = `output exceeded maxOutputSize (${output.maxOutputSize} bytes)`;
  else if (captured !== undefined) result.output = captured;
  return result;
}

/** As the shell executor reports a step its stop signal ended. */
function stopped(signal: string): StepResult {
  return { kind: 'ok', exitCode: 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0), signal, error: `signal: ${signal}` };
}

/** The daemon's message goes to the step's stderr log and becomes the step's error. */
function failed(output: StepOutput, message: string): StepResult {
  output.finish();
  return { kind: 'ok', exitCode: 1, error: output.error(message) };
}
