
export { startingParams, commandRunner, evaluateEnvWithCommands, type StartingParams } from './run/substitution.ts';
export { rerunSelection, queuedRecord, attemptRecord, type PriorAttempt, type Lineage } from './run/attempt.ts';
export { type SubDagRunner, type ChildStart, type SubDagCall } from './step/sub-dag.ts';
export { runMachine, type RunFinishedEvent, type RunInput } from './run/run.machine.ts';
export { MAX_SUB_DAG_DEPTH, nestingProblem, ancestry } from './run/nesting.ts';
export { logLine } from './run/log-line.ts';
export { shouldRetry } from './step/policies.ts';
export { planRun, runScope, type RunPlan } from './run/plan.ts';
export { unmetDagPrecondition } from './run/conditions.ts';
export { loadRunVariables } from './run/variables.ts';
export { LocalRunDispatcher, type RemoteRunDispatcher, type RemotePorts, type RemoteRunsFactory, type RunDispatcher, type RunReports } from './run-dispatcher.ts';
export { type CallerTrace } from './run/trace-plan.ts';
