#!/usr/bin/env node
// The troupe command: parses the verb and its flags (program.ts), runs it, and turns whatever went
// wrong into one line and an exit code (0 done, 1 failed, 2 the command line was wrong).
import { CommanderError } from 'commander';
import { buildProgram } from './program.ts';
import { UsageError, describeError } from './errors.ts';

async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = buildProgram((action) => async (...args) => {
    exitCode = await action(...args);
  });
  program.exitOverride();
  // The parser's own messages are replaced by ours (usageError below); help goes to stdout.
  program.configureOutput({ writeErr: () => {}, outputError: () => {} });
  for (const command of program.commands) {
    command.exitOverride();
    command.configureOutput({ writeErr: () => {}, outputError: () => {} });
  }
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  // Commander answers `help <word>` for a word that is no verb with its help on stderr, which we
  // silence: the word is said to be unknown, as `troupe <word>` says it (exit 2, a close verb).
  const verbs = program.commands.map((command) => command.name());
  if (argv[0] === 'help' && argv.length > 1 && !argv[1].startsWith('-') && !verbs.includes(argv[1])) argv = argv.slice(1);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.help' || error.code === 'commander.version') return 0;
      throw usageError(error, verbOf(argv, verbs));
    }
    throw error;
  }
  return exitCode;
}

function verbOf(argv: string[], verbs: string[]): string | undefined {
  return argv.find((word) => verbs.includes(word));
}

/** The parser's error, said our way: what is wrong, in the user's words. */
function usageError(error: CommanderError, verb: string | undefined): UsageError {
  const quoted = /'([^']*)'/.exec(error.message)?.[1] ?? '';
  const suggestion = /\(Did you mean ([^)]+)\?\)/.exec(error.message)?.[1];
  const hint = suggestion ? `; did you mean ${suggestion}?` : '';
  const where = verb ?? 'troupe';
  switch (error.code) {
    case 'commander.unknownCommand':
      return new UsageError(`there is no verb "${quoted}"${hint}`);
    case 'commander.unknownOption':
      return new UsageError(`${where} has no flag ${quoted}${hint}`, verb);
    case 'commander.missingArgument':
      return new UsageError(`${where} needs its <${quoted}> argument`, verb);
    case 'commander.optionMissingArgument':
      return new UsageError(`${flagName(quoted)} needs a value`, verb);
    case 'commander.missingMandatoryOptionValue':
      return new UsageError(`${where} needs ${flagName(quoted)}`, verb);
    case 'commander.excessArguments':
      return new UsageError(`${where} was given too many arguments`, verb);
    case 'commander.invalidArgument':
    case 'commander.invalidOptionArgument': {
      const reason = /\. (.*)$/.exec(error.message)?.[1] ?? 'it is not valid';
      return new UsageError(`${flagName(quoted) || 'a value'} "${/argument '([^']*)'/.exec(error.message)?.[1] ?? ''}" is not valid: ${reason.replace(/\.$/, '')}`, verb);
    }
    default:
      return new UsageError(error.message.replace(/^error: /, '').replace(/\s*\n\s*/g, '; '), verb);
  }
}

/** `-r, --run-id <id>` as a user types it: --run-id (Dagu's dotted names whole: --worker.labels). */
function flagName(flags: string): string {
  return /--[\w.-]+/.exec(flags)?.[0] ?? flags.split(/[ ,]/)[0];
}

// Output piped into a reader that stops early (`troupe start x | head -1`) is not an error: nothing
// more can be said on that pipe, and the verb goes on to its end (a run it follows is not left
// half-done), saying nothing more there.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode ??= code; },
  (error: unknown) => {
    const { line, code } = describeError(error);
    process.stderr.write(`${line}\n`);
    process.exitCode = code;
  },
);

