// What runs do beside their steps, on the step pool like the steps: start and remove a DAG-level
// container (the run actor's startingContainer and removingContainer states), and send the run's
// notification mail (notifications.ts). The run actor decides when; this module how.
import { stat } from 'node:fs/promises';
import { fromPromise } from 'xstate';
import type { LogStore, RunRecord, StepDispatcher, StepResult, StepTask } from '../core/index.ts';
import { logLine } from './run/log-line.ts';
import { runMail, stepErrorMail, type MailConfig } from './run/notifications.ts';
import type { RunPlan } from './run/plan.ts';
import type { ServiceOutcome } from './run/run.machine.ts';
import { log } from '../logging/index.ts';

/** The log files among `paths` that exist: a step that did not run, or wrote nothing, has none. */
async function existing(paths: string[] | undefined): Promise<string[] | undefined> {
  if (!paths) return undefined;
  const found = await Promise.all(paths.map((path) => stat(path).then((info) => info.isFile(), () => false)));
  return paths.filter((_, index) => found[index]);
}

/** The stop a run's shared container gets when the run is stopped while it starts. */
const STOP_SIGNAL = 'SIGTERM';

export function runServices(dispatcher: StepDispatcher, logs: Pick<LogStore, 'appendRunLog'>, now: () => number) {
  // A run stopped while its container starts goes on to remove it at once; the start, told to
  // stop, may still be creating it. The removal waits for the start to settle, so that the run is
  // not recorded ended while its container is still there.
  const starting = new Map<string, Promise<unknown>>();
  const task = (plan: RunPlan, executor: StepTask['executor']): StepTask => ({
    executor, scriptPath: '', env: plan.baseEnv, workingDir: plan.steps[0]?.dirBase ?? plan.steps[0]?.dir ?? process.cwd(),
    captureOutput: false, maxOutputSize: plan.maxOutputSize, secrets: plan.secrets,
    ...(plan.services ? { services: plan.services } : {}),
  });
  const failure = (result: StepResult): string | undefined => {
    if (result.kind === 'error') return result.message;
    if (result.kind === 'ok' && result.exitCode !== 0) return result.error ?? `exit status ${result.exitCode}`;
    return undefined;
  };
  const sendMail = (plan: RunPlan, record: RunRecord, config: MailConfig | undefined, what: string) => {
    // Without smtp the mail executor fails saying so, and the run log tells it.
    if (!config) return;
    void existing(config.attachments).then((attachments) => {
      const mail = { ...config, ...(attachments ? { attachments } : {}) };
      return dispatcher.dispatch(task(plan, { type: 'mail', config: mail })).result;
    }).then((result) => {
      const error = failure(result);
      if (error === undefined) return;
      const line = logLine(now(), 'ERROR', `${what} was not sent`, { dag: record.name, 'run-id': record.dagRunId, error });
      return logs.appendRunLog(record.log, line);
    }).catch((error: Error) => log.error({ dag: record.name, dagRunId: record.dagRunId, error: error.message }, `${what} failed`));
  };
  return {
    prepareServices: fromPromise<ServiceOutcome, RunPlan>(async ({ input: plan, signal }) => {
      const handle = dispatcher.dispatch(task(plan, { type: 'dag-container', config: { action: 'start' } }));
      const name = plan.services!.container!.name;
      starting.set(name, handle.result);
      void handle.result.finally(() => starting.delete(name));
      signal.addEventListener('abort', () => handle.stop(STOP_SIGNAL, plan.maxCleanUpTimeSec * 1000), { once: true });
      const error = failure(await handle.result);
      return error === undefined ? { at: now() } : { at: now(), error };
    }),
    releaseServices: fromPromise<ServiceOutcome, RunPlan>(async ({ input: plan }) => {
      await starting.get(plan.services!.container!.name);
      const error = failure(await dispatcher.dispatch(task(plan, { type: 'dag-container', config: { action: 'remove' } })).result);
      return error === undefined ? { at: now() } : { at: now(), error };
    }),
    mailRunEnd: (_: unknown, { plan, record }: { plan: RunPlan; record: RunRecord }) => sendMail(plan, record, runMail(plan, record), 'The run\'s notification mail'),
    mailStepError: (_: unknown, { plan, record, index }: { plan: RunPlan; record: RunRecord; index: number }) =>
      sendMail(plan, record, stepErrorMail(plan, record, index), `The error mail of step ${record.nodes[index]?.step.name}`),
  };
}
