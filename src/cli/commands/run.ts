// start, retry, restart and exec: a run begun, then followed to its end with live progress and a
// summary; exit 0 when it succeeded, 1 otherwise. Ctrl-C stops the run cleanly and says so.
import type { Backend, RunView } from '../backend/types.ts';
import { dagName, dagRef, paramsOf } from '../dag-arg.ts';
import { EXIT_FAILED, EXIT_OK } from '../errors.ts';
import { Progress, progressMode } from '../progress.ts';
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
  return withBackend(options, async (backend) => {
    const { dagRunId } = await backend.start(ref, { params, dagRunId: options.runId, dagName: options.name });
    const name = options.name ?? (ref.kind === 'file' ? ref.name : dagName(dag, dagsDir));
    return follow(backend, name, dagRunId, options);
  });
}

export async function retry(dag: string, options: CommonOptions & { runId: string; step?: string }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  return withBackend(options, async (backend) => {
    const before = await backend.run(name, options.runId);
    await backend.retry(name, before.dagRunId, { stepName: options.step });
    return follow(backend, name, before.dagRunId, options, before);
  });
}

/** Dagu's restart: the run (the latest by default) is stopped if it runs, then run again anew with its params. */
export async function restart(dag: string, options: CommonOptions & { runId?: string }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  return withBackend(options, async (backend) => {
    const prior = await backend.run(name, options.runId ?? 'latest');
    if (prior.statusLabel === 'running') {
      await backend.stop(name, prior.dagRunId);
      await backend.watch(name, prior.dagRunId, () => {});
    }
    const { dagRunId, queued } = await backend.reschedule(name, prior.dagRunId, {});
    if (queued) {
      say(options, { type: 'queued', name, dagRunId }, `dag-run ${name} ${dagRunId} queued (its queue is full)`);
      return EXIT_OK;
    }
    return follow(backend, name, dagRunId, options);
  });
}

/** A one-off command as a run of its own, with no YAML (Dagu's `exec`). */
export async function exec(command: string[], options: CommonOptions & { runId?: string; name?: string; workdir?: string; env?: string[] }): Promise<number> {
  const name = options.name ?? 'exec';
  const step: Record<string, unknown> = { name: 'run', command: command.map(shellWord).join(' ') };
  if (options.workdir) step.dir = options.workdir;
  const spec = JSON.stringify({ name, ...(options.env?.length ? { env: options.env } : {}), steps: [step] });
  return withBackend(options, async (backend) => {
    const { dagRunId } = await backend.startSpec(spec, { name, dagRunId: options.runId });
    return follow(backend, name, dagRunId, options);
  });
}

/** Follows the run to its end; Ctrl-C stops it and waits for its end, a second Ctrl-C leaves at once. */
async function follow(backend: Backend, name: string, dagRunId: string, options: CommonOptions, before?: RunView): Promise<number> {
  const progress = new Progress(progressMode(options.json));
  if (before) progress.seed(before);
  const previousEnd = before?.finishedAt;
  let interrupted = false;
  const onInterrupt = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\nCtrl-C: stopping dag-run ${name} ${dagRunId} (Ctrl-C again to leave it running)\n`);
    backend.stop(name, dagRunId).catch(() => undefined);
  };
  process.on('SIGINT', onInterrupt);
  let final: RunView;
  try {
    final = await backend.watch(name, dagRunId, (run) => progress.update(run), { previousEnd });
  } finally {
    process.off('SIGINT', onInterrupt);
  }
  progress.finish(final, { interrupted });
  return final.statusLabel === 'succeeded' ? EXIT_OK : EXIT_FAILED;
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
