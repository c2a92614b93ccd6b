// cleanup: a DAG's finished runs older than a retention removed for good, with their sub DAG runs
// and log files (Dagu's flags: --retention-days, 0 = every finished run; --dry-run; --yes). With a
// server on the home it asks the server (`POST /dag-runs/cleanup`); embedded, the engine's
// retention sweeper does the same: the same runs go either way.
import { createInterface } from 'node:readline/promises';
import type { CleanupView } from '../backend/types.ts';
import { dagName } from '../dag-arg.ts';
import { CliError, EXIT_OK } from '../errors.ts';
import { printJson } from '../output.ts';
import { homeConfig, type CommonOptions } from '../target.ts';
import { withBackend } from './run.ts';

export async function cleanup(dag: string, options: CommonOptions & { retentionDays: number; dryRun?: boolean; yes?: boolean }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  const { retentionDays } = options;
  const what = retentionDays === 0 ? `every finished dag-run of ${name}` : `the dag-runs of ${name} finished more than ${retentionDays} days ago`;
  const nothing = `nothing to remove: no ${what.replace(/^every |^the /, '')}\n`;
  const report = (view: CleanupView) => {
    if (options.json) printJson({ name, dryRun: view.dryRun, dagRunIds: view.dagRuns.map(({ dagRunId }) => dagRunId), removed: view.removed });
    else if (view.dagRuns.length === 0) process.stdout.write(nothing);
    else if (view.dryRun) process.stdout.write(`would remove ${count(view)} (${what}):\n${view.dagRuns.map(({ dagRunId }) => `  ${dagRunId}`).join('\n')}\n`);
    else process.stdout.write(`removed ${count(view)} of ${name}\n`);
    return EXIT_OK;
  };
  return withBackend(options, async (backend) => {
    // Without --yes, what would go is shown in the question; with it, nothing is asked.
    if (options.dryRun || !options.yes) {
      const preview = await backend.cleanup(name, { retentionDays, dryRun: true });
      if (options.dryRun || preview.dagRuns.length === 0) return report(preview);
      if (!(await confirmed(`remove ${count(preview)}, ${what}, with their logs? [y/N] `))) {
        process.stdout.write('nothing removed\n');
        return EXIT_OK;
      }
    }
    return report(await backend.cleanup(name, { retentionDays, dryRun: false }));
  });
}

function count(view: CleanupView): string {
  return `${view.dagRuns.length} dag-run${view.dagRuns.length === 1 ? '' : 's'}`;
}

async function confirmed(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) throw new CliError('cleanup removes runs for good and there is no terminal to ask', 'pass --yes to confirm, or --dry-run to see what it would remove');
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}
