// The executor actor a step invokes for each execution: checks the step's preconditions, builds its
// task when its env runs backtick commands, dispatches it to the pool and, for a repeatPolicy with a
// condition, tests it afterwards; all through the pool. It hears `step.stop` at any point and reports
// one `step.exited`.
import { fromCallback } from 'xstate';
import type { Clock, StepDispatcher, StepHandle, StepResult, StepTask } from '../../core/index.ts';
import { checkConditions } from '../run/conditions.ts';
import { maskResult } from '../run/masking.ts';
import type { SecretScope } from '../run/shell-references.ts';
import { pendingStep, stepTaskWithCommands } from '../run/plan.ts';
import { commandProbe, commandRunner } from '../run/substitution.ts';
import type { ExecutorInput } from './step.machine.ts';
import { resultInLog, runSubDags, type SubDagRunner } from './sub-dag.ts';

export function executeStepOn(dispatcher: StepDispatcher, clock: Clock, subDags: SubDagRunner) {
  return fromCallback<{ type: 'step.stop' }, ExecutorInput>(({ input, sendBack, receive }) => {
    let handle: StepHandle | undefined;
    let stopped = false;
    receive((event) => {
      if (event.type !== 'step.stop') return;
      stopped = true;
      handle?.stop(input.signalOnStop, input.cleanupMs);
    });
    // Every result is masked here: errors, skip reasons and a sub DAG call's result reach the record.
    const secretValues = input.task?.secrets ?? input.pending?.plan.secrets ?? [];
    const finish = (result: StepResult, repeatConditionHolds?: boolean) =>
      sendBack({ type: 'step.exited', result: maskResult(result, secretValues), at: clock.now(), ...(repeatConditionHolds === undefined ? {} : { repeatConditionHolds }) });
    const secretsOf = (task: StepTask): SecretScope => ({ values: task.secrets, shell: task.shell });
    // Conditions see what the step's command sees: its env and the positional params.
    const conditionScope = (task: StepTask) => (input.positional ? { ...task.env, ...input.positional } : task.env);
    const dispatch = (task: StepTask) => {
      // A sub DAG call runs child runs instead of a process (not a pool task: docs/architecture.md).
      handle = input.call
        // The child masks what this run masks.
        ? resultInLog(runSubDags(subDags, { ...input.call, parent: { ...input.call.parent, secrets: task.secrets, ...traceOf(input) } }, task.env, (child) => sendBack({ type: 'step.subRun', ...child })), task, task.secrets)
        : dispatcher.dispatch(task);
      if (stopped) handle.stop(input.signalOnStop, input.cleanupMs);
      void handle.result.then(async (result) => {
        // repeatPolicy's condition is tested after each execution, with the step's variables.
        if (!input.repeatCondition || stopped) return finish(result);
        const probe = commandProbe(dispatcher, task.workingDir, task.shell, task.maxOutputSize);
        const verdict = await checkConditions([{ ...input.repeatCondition, negate: false }], conditionScope(task), probe, secretsOf(task), input.stepResults).catch(() => ({ holds: false }));
        finish(result, verdict.holds);
      });
    };
    // The common case goes straight to the pool.
    if (input.task && input.preconditions.length === 0 && !input.call) {
      dispatch(withTraceParent(input.task, input.traceParent));
      return;
    }
    const start = async (task: StepTask) => {
      if (input.preconditions.length > 0) {
        const probe = commandProbe(dispatcher, task.workingDir, task.shell, task.maxOutputSize);
        const verdict = await checkConditions(input.preconditions, conditionScope(task), probe, secretsOf(task), input.stepResults);
        if (!verdict.holds) return finish({ kind: 'skipped', message: verdict.message });
      }
      if (stopped) return finish({ kind: 'error', code: 'stopped', message: 'stopped before its process started' });
      dispatch(task);
    };
    const pendingOne = input.pending ? pendingStep(input.pending) : undefined;
    const prepared = input.task
      ? Promise.resolve(input.task)
      : stepTaskWithCommands(input.pending!, commandRunner(dispatcher, pendingOne!.dirBase ?? pendingOne!.dir, pendingOne!.shell, input.pending!.plan.maxOutputSize));
    void prepared.then(
      (task) => start(withTraceParent(task, input.traceParent)).catch((error: Error) => finish({ kind: 'error', code: 'precondition_failed', message: error.message })),
      // A backtick command of the step's env failed: the step fails, naming it.
      (error: Error) => finish({ kind: 'error', code: 'env_failed', message: error.message }),
    );
  });
}

/** A traced execution's command joins its trace: TRACEPARENT names the execution's span. */
function withTraceParent(task: StepTask, traceParent: string | undefined): StepTask {
  return traceParent === undefined ? task : { ...task, env: { ...task.env, TRACEPARENT: traceParent } };
}

/** What a traced execution hands the sub DAG runs it starts. */
function traceOf(input: ExecutorInput): { traceParent?: string } {
  return input.traceParent !== undefined && input.call?.parent.traceExport ? { traceParent: input.traceParent } : {};
}
