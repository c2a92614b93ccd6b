// start, retry, restart and exec: a run begun, then followed to its end with live progress and a
// summary; exit 0 when it succeeded, 1 otherwise. Ctrl-C stops the run cleanly and says so.
import type { Backend, RunView } from '../backend/types.ts';
import { dagName, dagRef, paramsOf } from '../dag-arg.ts';
import { EXIT_FAILED, EXIT_OK } from '../errors.ts';
import { Progress, progressMode } from '../progress.ts';
import { StepOutputs } from '../step-outputs.ts';
import { StopSignals } from '../stop-signals.ts';
import { homeConfig, openBackend, type CommonOptions } from '../target.ts';

export interface StartOptions extends CommonOptions {
  params?: string;
  runId?: string;
  name?: string;
}

export async function start(dag: string, words: string[], options: StartOptions): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const ref = dagRef(dag, dagsDir);
  const params = paramsOf(options.params, words);
  return following(options, async (backend, interrupt) => {
    const { dagRunId } = await backend.start(ref, { params, dagRunId: options.runId, dagName: options.name });
    const name = options.name ?? (ref.kind === 'file' ? ref.name : dagName(dag, dagsDir));
    return follow(backend, name, dagRunId, options, interrupt);
  });
}

export async function retry(dag: string, options: CommonOptions & { runId: string; step?: string }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  return following(options, async (backend, interrupt) => {
    const before = await backend.run(name, options.runId);
    await backend.retry(name, before.dagRunId, { stepName: options.step });
    return follow(backend, name, before.dagRunId, options, interrupt, before);
  });
}

/** Dagu's restart: the run (the latest by default) is stopped if it runs, then run again anew with its params. */
export async function restart(dag: string, options: CommonOptions & { runId?: string }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  return following(options, async (backend, interrupt) => {
    const prior = await backend.run(name, options.runId ?? 'latest');
    if (prior.statusLabel === 'running' && !prior.interrupted) {
      await backend.stop(name, prior.dagRunId);
      await backend.watch(name, prior.dagRunId, () => {});
    }
    const { dagRunId, queued } = await backend.reschedule(name, prior.dagRunId, {});
    if (queued) {
      say(options, { type: 'queued', name, dagRunId }, `dag-run ${name} ${dagRunId} queued (its queue is full)`);
      return EXIT_OK;
    }
    return follow(backend, name, dagRunId, options, interrupt);
  });
}

/**
 * `status --follow`: a run already begun (the latest by default), followed to its end as `start`
 * follows its own, each step's output included; Ctrl-C leaves it running.
 */
export async function watchRun(dag: string, options: CommonOptions & { runId?: string }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  return following(options, async (backend, interrupt) => {
    const run = await backend.run(name, options.runId ?? 'latest');
    interrupt.leaves(name, run.dagRunId);
    return follow(backend, run.name, run.dagRunId, options, interrupt, undefined, undefined, false);
  });
}

/** A one-off command as a run of its own, with no YAML (Dagu's `exec`). */
export async function exec(command: string[], options: CommonOptions & { runId?: string; name?: string; workdir?: string; env?: string[] }): Promise<number> {
  const name = options.name ?? 'exec';
  const step: Record<string, unknown> = { name: 'run', command: command.map(shellWord).join(' ') };
  if (options.workdir) step.dir = options.workdir;
  const spec = JSON.stringify({ name, ...(options.env?.length ? { env: options.env } : {}), steps: [step] });
  return following(options, async (backend, interrupt) => {
    const { dagRunId } = await backend.startSpec(spec, { name, dagRunId: options.runId });
    // What the command writes is shown as it writes it, as the terminal would show it: no step
    // name before each line, and a prompt (a line with no line break yet) shown once it settles.
    const output = (progress: Progress) => new StepOutputs(backend, { name, dagRunId }, ['stdout', 'stderr'],
      (step, stream, line) => progress.output({ name, dagRunId }, step, stream, line), undefined, { partialLines: true });
    return follow(backend, name, dagRunId, options, interrupt, undefined, output);
  });
}

/**
 * Ctrl-C while a run is followed: the first stops the run (the command waits for its end and says
 * so), a second leaves at once. Listening starts before the run does, so that no Ctrl-C is missed.
 * A Ctrl-C that npm (`npx troupe`) relays on top of the terminal's is the same one (stop-signals.ts).
 * SIGTERM (`timeout`, a process manager, a CI job cancelled) does the same as Ctrl-C.
 */
class Interrupt {
  private stopRun: (() => void) | undefined;
  /** What stopped the run: Ctrl-C or SIGTERM. */
  private by: string | undefined;
  private readonly signals = new StopSignals(['SIGINT', 'SIGTERM'], (signal) => {
    this.by = signal === 'SIGINT' ? 'Ctrl-C' : signal;
    this.stopRun?.();
  }, (signal) => process.exit(signal === 'SIGINT' ? 130 : 143));

  /** What stopped the followed run, if a signal did. */
  get stoppedBy(): string | undefined {
    return this.by;
  }

  /** From here a signal leaves, and the run goes on (a run followed that this command did not begin). */
  leaves(name: string, dagRunId: string): void {
    this.stopRun = () => {
      process.stderr.write(`\n${this.by}: leaving dag-run ${name} ${dagRunId}; it goes on\n`);
      process.exit(130);
    };
    if (this.by !== undefined) this.stopRun();
  }

  /** From here a signal stops this run (at once, when one came already). */
  follows(backend: Backend, name: string, dagRunId: string, progress: Progress): void {
    this.stopRun = () => {
      progress.release();
      process.stderr.write(`\n${this.by}: stopping dag-run ${name} ${dagRunId} (${this.by} again to leave without waiting for its end)\n`);
      backend.stop(name, dagRunId).catch(() => undefined);
    };
    if (this.by !== undefined) this.stopRun();
  }

  close(): void {
    this.signals.close();
  }
}

/** Every step's output as it is written, each line after its step's name: several steps may write at once. */
function stepOutputs(backend: Backend, name: string, dagRunId: string, progress: Progress, before?: RunView): StepOutputs {
  const outputs = new StepOutputs(backend, { name, dagRunId }, ['stdout', 'stderr'],
    (step, stream, line) => progress.output({ name, dagRunId }, step, stream, line, `${step} | `));
  if (before) outputs.seed(before);
  return outputs;
}

/**
 * Follows the run to its end with live progress, then sums it up. What the run writes is shown as
 * it is written, each step's log streamed (`output`: how, exec's without step names); each change
 * of the run is told once what was written before it has been shown.
 */
async function follow(backend: Backend, name: string, dagRunId: string, options: CommonOptions, interrupt: Interrupt, before?: RunView,
  output?: (progress: Progress) => StepOutputs, stops = true): Promise<number> {
  const progress = new Progress(progressMode(options.json));
  if (before) progress.seed(before);
  if (stops) interrupt.follows(backend, name, dagRunId, progress);
  const steps = output?.(progress) ?? stepOutputs(backend, name, dagRunId, progress, before);
  try {
    return await followTo(backend, name, dagRunId, options, interrupt, progress, steps, before);
  } finally {
    steps.close();
  }
}

async function followTo(backend: Backend, name: string, dagRunId: string, options: CommonOptions, interrupt: Interrupt, progress: Progress,
  steps: StepOutputs, before?: RunView): Promise<number> {
  // One thing at a time, in order: a change told once the output before it was shown.
  let turn = Promise.resolve();
  const next = (work: () => Promise<void>) => { turn = turn.then(work).catch(() => undefined); };
  const final = await backend.watch(name, dagRunId, (run) => {
    next(async () => {
      // Each step that ended, in order, with the rest of its output before its end; a later
      // step that began meanwhile is told (and its output shown) after.
      for (let index = 0; index < run.nodes.length; index++) {
        if (run.nodes[index].finishedAt === '') continue;
        const through = progress.through(run, index + 1);
        const step = { ...run, nodes: [run.nodes[index]] };
        progress.starts(through);
        steps.seen(step);
        await steps.settled(step);
        progress.update(through);
      }
      progress.update(run);
      steps.seen(run);
    });
  }, { previousEnd: before?.finishedAt });
  await turn;
  progress.starts(final);
  await steps.finish(final);
  progress.end(final);
  progress.summary(final, { stoppedBy: interrupt.stoppedBy });
  return final.statusLabel === 'succeeded' ? EXIT_OK : EXIT_FAILED;
}

/** Runs `work` with the backend and a Ctrl-C listener, both closed after. */
async function following(options: CommonOptions, work: (backend: Backend, interrupt: Interrupt) => Promise<number>): Promise<number> {
  const interrupt = new Interrupt();
  try {
    return await withBackend(options, (backend) => work(backend, interrupt));
  } finally {
    interrupt.close();
  }
}

export async function withBackend(options: CommonOptions, work: (backend: Backend) => Promise<number>): Promise<number> {
  const backend = await openBackend(options);
  try {
    return await work(backend);
  } finally {
    await backend.close();
  }
}

export function say(options: CommonOptions, json: unknown, text: string): void {
  process.stdout.write(`${options.json ? JSON.stringify(json) : text}\n`);
}

/** A word of the command as the shell would need it written to mean the same. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
