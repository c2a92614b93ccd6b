// The troupe command's verbs and flags (commander), with Dagu's names. Each verb's work lives in
// commands/ and is loaded when the verb runs, so that help, version and errors start fast.
import { Command, InvalidArgumentError } from 'commander';

export const SERVER_FLAGS_HELP = `
The API server and the scheduler run in one process (one process owns a home): \`server\` and
\`start-all\` are the same; \`scheduler\` runs schedules and queues without the API.
Defaults: 127.0.0.1:8080, home ~/.troupe; TROUPE_* variables and HOME/config.yaml are read too,
flags win over both. SIGHUP reloads the custom queues, the remote nodes and the auth settings.`;

const WORKER_HELP = `
A worker takes the runs troupe servers hand it through Redis (the servers' --redis, the same URL)
and runs them on its own scratch home, up to --max-active-runs at once, until SIGTERM or SIGINT:
then it takes no new run, gives its runs --shutdown-grace seconds to finish, stops the rest and
exits 0. Dagu's names are taken too: -l/--worker.labels, -m/--worker.max-active-runs, -w/--worker.id.
Example: troupe worker --redis redis://redis.internal:6379 --labels gpu=true,region=eu`;

const WHERE_HELP = `
Where it runs: with --server URL (or TROUPE_SERVER), on that server; else, when a server owns the
home, on it; else in this process, on the home (nothing else may use the home meanwhile).`;

/** Where the home is: the flags of every verb, the servers' included. */
function homeFlags(command: Command): Command {
  return command
    .option('--home <dir>', 'the home (dags/, data/, logs/; default ~/.troupe, or TROUPE_HOME)')
    .option('--config <file>', 'the configuration file (default HOME/config.yaml)')
    .option('--dags <dir>', 'the DAGs folder (default HOME/dags)');
}

/** The flags every verb takes: where troupe is, and how to print. */
function common(command: Command): Command {
  return homeFlags(command)
    .option('--server <url>', 'a troupe server to talk to (or TROUPE_SERVER)')
    .option('--token <token>', 'the API token or key the server asks for (or TROUPE_TOKEN)')
    .option('--json', 'print JSON (JSON lines while a run is followed)');
}

function runFlags(command: Command): Command {
  return command
    .option('-p, --params <params>', 'parameters: "KEY=value KEY2=value2" or a JSON object (or the words after --)')
    .option('-r, --run-id <id>', 'the new run\'s id (default: a new UUIDv7)')
    .option('-N, --name <name>', 'the run\'s DAG name, instead of the definition\'s');
}

function serverFlags(command: Command): Command {
  return homeFlags(command)
    .option('--host <host>', 'the address to listen on (default 127.0.0.1)')
    .option('--port <port>', 'the port to listen on (default 8080; 0 picks a free one)')
    .option('--http <carrier>', 'the HTTP server: uws, node (also HTTP/1.0 and pipelining) or auto')
    .option('--shutdown-grace <sec>', 'on SIGTERM or SIGINT, seconds active runs may take to finish (default 0)')
    .option('--log-level <level>', 'the server log (on stdout): debug, info, warn, error or silent')
    .option('--log-format <format>', 'the server log\'s lines: json, text, or auto (text on a terminal, else JSON; the default)')
    .option('--no-ui', 'do not serve the dashboard at / (the API is served all the same)')
    .option('--redis <url>', 'hand runs of DAGs with a workerSelector to `troupe worker`s through this Redis (redis:// or rediss://; or TROUPE_REDIS_URL)');
}

function days(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('give a whole number of days, 0 or more');
  return parsed;
}

/** What a verb's action is handed: its arguments, then its options. */
type Action = (...args: any[]) => Promise<number>;

export function buildProgram(run: (action: Action) => (...args: unknown[]) => Promise<void>): Command {
  const program = new Command('troupe')
    .description('troupe runs workflows (DAGs of steps, written in YAML) and serves a Dagu-compatible REST API.')
    .usage('<verb> [arguments] [flags]')
    .helpCommand('help [verb]', 'show the help of a verb')
    .addHelpText('after', `
A new user needs three commands:
  troupe server                 run the API server and the scheduler (home ~/.troupe)
  troupe start example          run a DAG and follow its steps to the end
  troupe status example         show its latest run
${WHERE_HELP}
Documentation: docs/cli.md. \`troupe help <verb>\` shows a verb's flags.`);

  const verb = (name: string, summary: string) => program.command(name).summary(summary).description(summary);

  serverFlags(verb('server', 'run the REST API server and the scheduler (the same as start-all)'))
    .addHelpText('after', SERVER_FLAGS_HELP)
    .action(run(async (options) => (await import('./commands/start-all.ts')).serve(options, true)));
  serverFlags(verb('start-all', 'run the REST API server and the scheduler in one process'))
    .addHelpText('after', SERVER_FLAGS_HELP)
    .action(run(async (options) => (await import('./commands/start-all.ts')).serve(options, true)));
  serverFlags(verb('scheduler', 'run schedules and queues, without the API (commands cannot reach it)'))
    .addHelpText('after', SERVER_FLAGS_HELP)
    .action(run(async (options) => (await import('./commands/start-all.ts')).serve(options, false)));

  verb('worker', 'take runs from troupe servers through Redis and run them, until SIGTERM or SIGINT')
    .option('--redis <url>', 'the servers\' Redis: redis:// or rediss:// (or TROUPE_REDIS_URL, or distributed.redis in config.yaml)')
    .option('-l, --labels <k=v,...>', 'k=v pairs a DAG\'s workerSelector is matched against (default none)')
    .option('--worker.labels <k=v,...>', 'Dagu\'s name for --labels')
    .option('-m, --max-active-runs <n>', 'the most runs at once (default 100, as Dagu\'s)')
    .option('--worker.max-active-runs <n>', 'Dagu\'s name for --max-active-runs')
    .option('-w, --id <name>', 'the worker\'s id: 1 to 64 letters, digits, dots, dashes or underscores (default: the host name and the process id)')
    .option('--worker.id <name>', 'Dagu\'s name for --id')
    .option('--home <dir>', 'the worker\'s scratch home (default ~/.troupe-worker/<id>); its config.yaml is read')
    .option('--config <file>', 'the configuration file (default HOME/config.yaml, HOME being --home, else TROUPE_HOME or ~/.troupe)')
    .option('--shutdown-grace <sec>', 'on SIGTERM or SIGINT, seconds its runs may take to finish before they are stopped (default 0)')
    .option('--keep-runs <n>', 'finished runs whose step logs and records stay in the scratch home, the newest; older ones are removed (default 1000; the server keeps them all)')
    .addHelpText('after', WORKER_HELP)
    .action(run(async (options) => (await import('./commands/worker.ts')).worker(options)));

  common(runFlags(verb('start', 'run a DAG and follow it to its end').argument('<dag>', 'a DAG name, or the path of a YAML file').argument('[params...]', 'parameters after --')))
    .addHelpText('after', `\nExit status: 0 when the run succeeded, 1 otherwise. Ctrl-C stops the run.${WHERE_HELP}`)
    .action(run(async (dag, params, options) => (await import('./commands/run.ts')).start(dag, params, options)));
  common(runFlags(verb('enqueue', 'queue a run of a DAG; a server starts it when its queue has room').argument('<dag>', 'a DAG name, or the path of a YAML file').argument('[params...]', 'parameters after --')))
    .option('-u, --queue <queue>', 'the queue, instead of the DAG\'s')
    .action(run(async (dag, params, options) => (await import('./commands/runs.ts')).enqueue(dag, params, options)));
  common(verb('dequeue', 'take a queued run out of its queue (recorded aborted)').argument('[dag]', 'the DAG name'))
    .option('-r, --run-id <id>', 'the queued run')
    .option('-d, --dag-run <dag:id>', 'the queued run as <dag>:<run-id> (Dagu\'s form)')
    .action(run(async (dag, options) => (await import('./commands/runs.ts')).dequeue(dag, options)));
  common(verb('dry', 'check a DAG and show the plan of a run, executing nothing').argument('<dag>', 'a DAG name, or the path of a YAML file').argument('[params...]', 'parameters after --'))
    .option('-p, --params <params>', 'parameters, as start takes them')
    .action(run(async (dag, params, options) => (await import('./commands/check.ts')).dry(dag, params, options)));
  common(verb('status', 'show a run\'s steps (the latest by default), or the recent runs').argument('[dag]', 'a DAG name or file; none: the recent runs of every DAG'))
    .option('-r, --run-id <id>', 'the run (default: the latest)')
    .option('-f, --follow', 'follow the run to its end, each step\'s output as it is written (Ctrl-C leaves it running); exit 0 when it succeeded, 1 otherwise')
    .action(run(async (dag, options) => (options.follow && dag !== undefined
      ? (await import('./commands/run.ts')).watchRun(dag, options)
      : (await import('./commands/runs.ts')).status(dag, options))));
  common(verb('stop', 'stop a run, or every running run of a DAG').argument('<dag>', 'a DAG name or file'))
    .option('-r, --run-id <id>', 'the run (default: every running run of the DAG)')
    .action(run(async (dag, options) => (await import('./commands/runs.ts')).stop(dag, options)));
  common(verb('retry', 'run a finished run again: its failed steps and what follows them, or one step').argument('<dag>', 'a DAG name or file'))
    .requiredOption('-r, --run-id <id>', 'the run to retry')
    .option('--step <name>', 'retry this step alone')
    .action(run(async (dag, options) => (await import('./commands/run.ts')).retry(dag, options)));
  common(verb('logs', 'print what a run\'s steps wrote (the latest run by default), or follow it as it is written')
    .argument('<dag>', 'a DAG name or file').argument('[runId]', 'the run (default: the latest)'))
    .option('--step <name>', 'only this step (its lines as they are; without it, each line after its step\'s name)')
    .option('-f, --follow', 'go on printing what the steps write until the run ends')
    .option('--stderr', 'what they wrote to stderr instead of stdout')
    .addHelpText('after', '\nExample: troupe logs nightly --follow')
    .action(run(async (dag, runId, options) => (await import('./commands/logs.ts')).logs(dag, runId, options)));
  common(verb('restart', 'stop a run if it runs, then run it again anew with its params').argument('<dag>', 'a DAG name or file'))
    .option('-r, --run-id <id>', 'the run (default: the latest)')
    .action(run(async (dag, options) => (await import('./commands/run.ts')).restart(dag, options)));
  common(verb('validate', 'check a DAG definition without running it').argument('<dag>', 'a DAG name, or the path of a YAML file'))
    .action(run(async (dag, options) => (await import('./commands/check.ts')).validate(dag, options)));
  common(verb('exec', 'run a command as a one-off run, with no YAML').argument('<command...>', 'the command and its arguments, after --'))
    .option('-r, --run-id <id>', 'the run\'s id')
    .option('-N, --name <name>', 'the run\'s DAG name (default: exec)')
    .option('--workdir <dir>', 'the directory the command runs in')
    .option('-E, --env <KEY=value>', 'a variable for the command (repeatable)', (value: string, all: string[] = []) => [...all, value])
    .addHelpText('after', '\nExample: troupe exec -- make test')
    .action(run(async (command, options) => (await import('./commands/run.ts')).exec(command, options)));
  common(verb('cleanup', 'remove a DAG\'s old finished runs and their logs').argument('<dag>', 'a DAG name or file'))
    .option('--retention-days <days>', 'keep the runs of the last days (default 0: remove every finished run)', days, 0)
    .option('--dry-run', 'show what would be removed, remove nothing')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(run(async (dag, options) => (await import('./commands/cleanup.ts')).cleanup(dag, options)));
  verb('completion', 'print the shell completion script (bash or zsh)').argument('<shell>', 'bash or zsh')
    .addHelpText('after', '\nbash: source <(troupe completion bash)   zsh: source <(troupe completion zsh)')
    .action(run(async (shell) => {
      process.stdout.write((await import('./commands/completion.ts')).completion(shell, program));
      return 0;
    }));
  verb('version', 'print troupe\'s version').option('--json', 'print JSON')
    .action(run(async (options) => {
      const { readFile } = await import('node:fs/promises');
      const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      process.stdout.write(options.json ? `${JSON.stringify({ version })}\n` : `troupe ${version}\n`);
      return 0;
    }));
  return program;
}
