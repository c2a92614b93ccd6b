#!/usr/bin/env node
// The troupe command. `start-all` runs the API server and the scheduler in this process.
import { parseArgs } from 'node:util';
import { startTroupe } from '../main.ts';
import { resolveConfig } from './config.ts';
import { flushLog, log } from '../logging/index.ts';

const usage = `usage: troupe start-all [--host HOST] [--port PORT] [--home DIR] [--dags DIR] [--config FILE]
                        [--http auto|uws|node] [--shutdown-grace SEC] [--log-level LEVEL]

  start-all   run the REST API server and the scheduler in one process
              (defaults: 127.0.0.1:8080, home ~/.troupe; TROUPE_* variables and
              HOME/config.yaml are read too, flags win over both)
  --http      the HTTP server: uws (uWebSockets.js), node (node:http: also HTTP/1.0,
              pipelining and JSON protocol errors), auto (uws, node when uws cannot load)
  --shutdown-grace  on SIGTERM or SIGINT, seconds active runs may go on to finish before
              they are stopped and recorded aborted (default 0); no run starts meanwhile,
              a second signal stops them at once
  --log-level debug, info (default), warn, error or silent: the server's log, JSON lines on
              stdout; debug adds a line per request`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      host: { type: 'string' }, port: { type: 'string' }, home: { type: 'string' },
      dags: { type: 'string' }, config: { type: 'string' }, http: { type: 'string' }, 'shutdown-grace': { type: 'string' }, 'log-level': { type: 'string' }, help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0] ?? 'start-all';
  if (values.help || command === 'help') {
    console.log(usage);
    return 0;
  }
  if (command !== 'start-all') {
    console.error(`troupe: unknown command "${command}"\n${usage}`);
    return 2;
  }
  // Handlers first: a signal that arrives while the service starts (or just after it reports that
  // it listens) must still get a clean shutdown, never the default disposition.
  const signalled = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  // Until the service runs, a SIGHUP has nothing to reload (and must not end the process).
  const ignoreHangup = () => {};
  process.on('SIGHUP', ignoreHangup);
  const config = await resolveConfig(values, process.env);
  for (const warning of config.warnings) log.warn(warning);
  const troupe = await startTroupe({ ...config, writeExample: true });
  // SIGHUP reloads the custom queues' limits and the remote nodes from the configuration (docs/configuration.md).
  process.on('SIGHUP', () => {
    resolveConfig(values, process.env).then(
      (reloaded) => {
        const queues = reloaded.queues ?? [];
        troupe.engine.setQueueLimits(new Map(queues.map(({ name, maxConcurrency }) => [name, maxConcurrency])));
        troupe.remoteNodes.replace(reloaded.remoteNodes ?? []);
        log.info(`SIGHUP: queues reloaded: ${queues.map(({ name, maxConcurrency }) => `${name}=${maxConcurrency}`).join(', ') || 'no custom queue'}; `
          + `remote nodes: ${troupe.remoteNodes.names().join(', ') || 'none'}`);
      },
      (error: unknown) => log.error(`SIGHUP: configuration not reloaded: ${(error as Error).message}`),
    );
  });
  process.off('SIGHUP', ignoreHangup);
  const url = `${troupe.server.scheme}://${config.host}:${troupe.server.port}/api/v2`;
  log.info({ url, carrier: troupe.server.carrier, home: config.home }, `troupe listening on ${url} (${troupe.server.carrier}); home ${config.home}; steps start with ${troupe.spawnMethod}`);
  const signal = await signalled;
  const grace = config.shutdownGraceMs ?? 0;
  if (grace > 0 && troupe.engine.activeRuns().length > 0) {
    log.info(`${signal} received, admitting no runs; active runs have ${grace / 1000} s to finish (a second signal stops them now)`);
    const stopNow = (again: string) => {
      log.info(`${again} received, stopping runs now`);
      void troupe.engine.close();
    };
    process.once('SIGINT', stopNow);
    process.once('SIGTERM', stopNow);
  } else {
    log.info(`${signal} received, stopping runs and shutting down`);
  }
  try {
    await troupe.close();
  } catch (error) {
    log.error({ error: (error as Error).message }, 'shutdown failed');
    flushLog();
    return 1;
  }
  log.info('stopped');
  flushLog();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode ??= code; },
  (error) => {
    console.error(`troupe: ${(error as Error).message}`);
    process.exitCode = 1;
  },
);
