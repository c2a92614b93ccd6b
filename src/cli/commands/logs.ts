// logs: what a run's steps wrote (the latest run by default), every step in order or one; with
// --follow, as they write it, until the run ends. Ended steps are read whole through the log
// chunks; running ones are followed through the backend's log stream.
import type { Backend, RunView } from '../backend/types.ts';
import { dagName } from '../dag-arg.ts';
import { CliError, EXIT_OK } from '../errors.ts';
import { StepOutputs, type LogStream } from '../step-outputs.ts';
import { homeConfig, type CommonOptions } from '../target.ts';
import { withBackend } from './run.ts';

export interface LogsOptions extends CommonOptions {
  step?: string;
  follow?: boolean;
  stderr?: boolean;
}

const FINAL_NODE = new Set(['succeeded', 'failed', 'aborted', 'skipped', 'partially_succeeded']);
const HANDLERS = new Set(['onInit', 'onSuccess', 'onFailure', 'onCancel', 'onExit']);

export async function logs(dag: string, runId: string | undefined, options: LogsOptions): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  const stream: LogStream = options.stderr ? 'stderr' : 'stdout';
  return withBackend(options, async (backend) => {
    const run = await backend.run(name, runId ?? 'latest');
    const steps = selectedSteps(run, options.step);
    // Each line after its step's name when several steps are shown (they may write at once).
    const print = (step: string, line: string) => process.stdout.write(options.json
      ? `${JSON.stringify({ type: 'output', name: run.name, dagRunId: run.dagRunId, step, stream, content: line })}\n`
      : `${options.step === undefined ? `${step} | ` : ''}${line}\n`);
    // Embedded, nothing runs a run that is not final (queued, or left by a server that stopped): it will not write more.
    const follow = options.follow === true && !FINAL_NODE.has(run.statusLabel) && (backend.kind === 'server' || !stalled(run));
    if (options.follow && !follow && !FINAL_NODE.has(run.statusLabel)) {
      process.stderr.write(`troupe: dag-run ${run.name} ${run.dagRunId} is ${run.statusLabel} and no server runs on the home: its logs as they stand\n`);
    }
    const ended = new Set(run.nodes.filter((node) => FINAL_NODE.has(node.statusLabel)).map((node) => node.step.name));
    for (const step of steps) if (!follow || ended.has(step) || HANDLERS.has(step)) await printWhole(backend, run, step, stream, (line) => print(step, line));
    if (!follow) return EXIT_OK;
    const outputs = new StepOutputs(backend, run, [stream], (step, _stream, line) => print(step, line));
    outputs.skip(run.nodes.map((node) => node.step.name).filter((step) => !steps.includes(step) || ended.has(step)));
    try {
      const final = await backend.watch(run.name, run.dagRunId, (view) => outputs.seen(view));
      await outputs.finish(final);
    } finally {
      outputs.close();
    }
    return EXIT_OK;
  });
}

/** The steps asked for: one, or every step of the run in order. */
function selectedSteps(run: RunView, step: string | undefined): string[] {
  const all = run.nodes.map((node) => node.step.name);
  if (step === undefined) return all;
  if (!all.includes(step) && !HANDLERS.has(step)) {
    throw new CliError(`dag-run ${run.name} ${run.dagRunId} has no step ${step}`, `its steps: ${all.join(', ') || 'none'}`);
  }
  return [step];
}

/** A run that nothing in this process will go on with. */
function stalled(run: RunView): boolean {
  return run.interrupted === true || run.statusLabel === 'queued' || run.statusLabel === 'not_started';
}

/** A step's log as it stands, a page of lines at a time. */
async function printWhole(backend: Backend, run: RunView, step: string, stream: LogStream, print: (line: string) => void): Promise<void> {
  for (let byteOffset = 0; ;) {
    const page = await backend.stepLogPage(run.name, run.dagRunId, step, stream, { byteOffset });
    if (page.lineCount === 0) return;
    for (const line of page.content.split('\n')) print(line);
    if (!page.hasMore || page.nextOffset <= byteOffset) return;
    byteOffset = page.nextOffset;
  }
}
