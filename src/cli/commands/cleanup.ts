// cleanup: a DAG's finished runs older than a retention removed for good, with their sub DAG runs
// and log files (Dagu's flags: --retention-days, 0 = every finished run; --dry-run; --yes). It
// needs the store itself: with a server on the home, that server's histRetentionDays does it.
import { createInterface } from 'node:readline/promises';
import { expiredHistory, removeHistory } from '../../command-home.ts';
import { EmbeddedBackend } from '../backend/embedded-backend.ts';
import { dagName } from '../dag-arg.ts';
import { CliError, EXIT_OK } from '../errors.ts';
import { printJson } from '../output.ts';
import { homeConfig, type CommonOptions } from '../target.ts';
import { withBackend } from './run.ts';

const DAY_MS = 86_400_000;

export async function cleanup(dag: string, options: CommonOptions & { retentionDays: number; dryRun?: boolean; yes?: boolean }): Promise<number> {
  const { dagsDir } = await homeConfig(options);
  const name = dagName(dag, dagsDir);
  return withBackend(options, async (backend) => {
    if (!(backend instanceof EmbeddedBackend)) {
      throw new CliError(`cleanup works on the store itself, which the server at ${backend.url} holds`,
        'stop the server and run it again, or set histRetentionDays in the DAG and let the server remove old runs');
    }
    const { runs } = await backend.handle();
    const trees = expiredHistory(runs, name, Date.now() - options.retentionDays * DAY_MS);
    const ids = trees.map((tree) => tree[tree.length - 1].dagRunId);
    const what = options.retentionDays === 0 ? `every finished dag-run of ${name}` : `the dag-runs of ${name} finished more than ${options.retentionDays} days ago`;
    if (options.dryRun || ids.length === 0) {
      if (options.json) printJson({ name, dryRun: options.dryRun === true, dagRunIds: ids, removed: 0 });
      else process.stdout.write(ids.length === 0 ? `nothing to remove: no ${what.replace(/^every |^the /, '')}\n` : `would remove ${ids.length} dag-run${ids.length === 1 ? '' : 's'} (${what}):\n${ids.map((id) => `  ${id}`).join('\n')}\n`);
      return EXIT_OK;
    }
    if (!options.yes && !(await confirmed(`remove ${ids.length} dag-run${ids.length === 1 ? '' : 's'}, ${what}, with their logs? [y/N] `))) {
      process.stdout.write('nothing removed\n');
      return EXIT_OK;
    }
    const removed = await removeHistory(runs, trees);
    if (options.json) printJson({ name, dryRun: false, dagRunIds: ids, removed });
    else process.stdout.write(`removed ${ids.length} dag-run${ids.length === 1 ? '' : 's'} of ${name}\n`);
    return EXIT_OK;
  });
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
