// status, stop, enqueue and dequeue: a look at runs, or one change to them, then done.
import type { RunView } from '../backend/types.ts';
import { dagName, dagRef, paramsOf } from '../dag-arg.ts';
import { CliError, EXIT_OK } from '../errors.ts';
import { between, printJson, table, time } from '../output.ts';
import { withoutStderrTail } from '../../core/index.ts';
import { homeConfig, type CommonOptions } from '../target.ts';
import { say, withBackend } from './run.ts';

/** How many runs `troupe status` with no DAG lists. */
const RECENT_RUNS = 20;

/** One run's details (the latest by default); with no DAG, the most recent runs of every DAG. */
export async function status(dag: string | undefined, options: CommonOptions & { runId?: string; follow?: boolean }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  return withBackend(options, async (backend) => {
    if (dag === undefined) {
      if (options.runId) throw new CliError('--run-id needs the DAG it is a run of', 'troupe status <dag> --run-id <id>');
      if (options.follow) throw new CliError('--follow needs the DAG whose run it follows', 'troupe status <dag> --follow');
      const runs = await backend.runs(undefined, { limit: RECENT_RUNS });
      if (options.json) printJson({ dagRuns: runs });
      else process.stdout.write(`${runs.length === 0 ? 'no dag-runs yet' : runTable(runs)}\n`);
      return EXIT_OK;
    }
    const run = await backend.run(dagName(dag, dagsDir), options.runId ?? 'latest');
    if (options.json) printJson({ dagRun: run });
    else process.stdout.write(`${runDetails(run)}\n`);
    return EXIT_OK;
  });
}

/** One run (--run-id), or every active run of the DAG (Dagu's stop without an id). */
export async function stop(dag: string, options: CommonOptions & { runId?: string }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  return withBackend(options, async (backend) => {
    if (options.runId) {
      await backend.stop(name, options.runId);
      say(options, { stopped: [{ name, dagRunId: options.runId }] }, `stopped dag-run ${name} ${options.runId}`);
    } else {
      const recorded = await backend.runs(name, { status: 1 });
      const running = recorded.filter((run) => !run.interrupted);
      for (const run of running) await backend.stop(name, run.dagRunId);
      const ids = running.map((run) => run.dagRunId);
      say(options, { stopped: ids.map((dagRunId) => ({ name, dagRunId })) }, ids.length === 0 ? `no running dag-run of ${name}` : `stopped ${ids.map((id) => `dag-run ${name} ${id}`).join(', ')}`);
      for (const run of recorded.filter((candidate) => candidate.interrupted)) process.stderr.write(`troupe: dag-run ${name} ${run.dagRunId} was ${LEFT_RUNNING}\n`);
    }
    return EXIT_OK;
  });
}

export async function enqueue(dag: string, words: string[], options: CommonOptions & { params?: string; runId?: string; name?: string; queue?: string }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const ref = dagRef(dag, dagsDir);
  const params = paramsOf(options.params, words);
  return withBackend(options, async (backend) => {
    const { dagRunId } = await backend.enqueue(ref, { params, dagRunId: options.runId, dagName: options.name, queue: options.queue });
    const name = options.name ?? (ref.kind === 'file' ? ref.name : dagName(dag, dagsDir));
    const where = backend.kind === 'server' ? '' : ' (no server runs on this home: it starts once `troupe server` runs)';
    say(options, { name, dagRunId, queued: true }, `queued dag-run ${name} ${dagRunId}${where}`);
    return EXIT_OK;
  });
}

/** `dequeue <dag> --run-id <id>`, or Dagu's `dequeue --dag-run <dag>:<id>`. */
export async function dequeue(dag: string | undefined, options: CommonOptions & { runId?: string; dagRun?: string }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  let name: string;
  let dagRunId: string;
  if (options.dagRun) {
    const split = options.dagRun.lastIndexOf(':');
    if (split <= 0 || split === options.dagRun.length - 1) throw new CliError(`--dag-run ${options.dagRun} is not <dag>:<run-id>`, 'troupe dequeue --dag-run mydag:0190...');
    name = options.dagRun.slice(0, split);
    dagRunId = options.dagRun.slice(split + 1);
  } else if (dag && options.runId) {
    name = dagName(dag, dagsDir);
    dagRunId = options.runId;
  } else {
    throw new CliError('dequeue needs the queued run', 'troupe dequeue <dag> --run-id <id>');
  }
  return withBackend(options, async (backend) => {
    await backend.dequeue(name, dagRunId);
    say(options, { dequeued: { name, dagRunId } }, `dequeued dag-run ${name} ${dagRunId}`);
    return EXIT_OK;
  });
}

/** What is said of a run a crashed server left running, while no server runs on the home. */
const LEFT_RUNNING = 'left running by a server that stopped without ending it; no process runs it: '
  + 'the next `troupe server` (or `troupe scheduler`) on the home resumes or settles it';

const statusOf = (run: RunView) => (run.interrupted ? `${run.statusLabel} (interrupted)` : run.statusLabel);

function runTable(runs: RunView[]): string {
  return table(['DAG', 'RUN ID', 'STATUS', 'STARTED', 'DURATION'],
    runs.map((run) => [run.name, run.dagRunId, statusOf(run), time(run.startedAt || run.queuedAt), between(run.startedAt, run.finishedAt)]));
}

function runDetails(run: RunView): string {
  const head = [
    `dag-run ${run.name} ${run.dagRunId}: ${statusOf(run)}`,
    ...(run.interrupted ? [`  interrupted: ${LEFT_RUNNING}`] : []),
    `  started ${time(run.startedAt)}, finished ${time(run.finishedAt)}, took ${between(run.startedAt, run.finishedAt)}`,
    ...(run.workerId !== undefined ? [`  worker ${run.workerId}`] : []),
    ...(run.params && run.params !== '{}' ? [`  params ${run.params}`] : []),
    ...(run.log ? [`  log ${run.log}`] : []),
  ];
  if (run.nodes.length === 0) return head.join('\n');
  const steps = table(['STEP', 'STATUS', 'STARTED', 'DURATION', 'ERROR'],
    run.nodes.map((node) => [node.step.name, node.statusLabel, time(node.startedAt), between(node.startedAt, node.finishedAt), withoutStderrTail(node.error)]));
  return `${head.join('\n')}\n\n${steps}`;
}
