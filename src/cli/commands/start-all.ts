// `troupe start-all` (and `server`, its Dagu name): the REST API server and the scheduler in one
// process, until SIGTERM or SIGINT; SIGHUP reloads the custom queues, the remote nodes and the auth settings.
// `troupe scheduler`: the same without the API (schedules and queues only).
import { openEngine, startTroupe, type EngineHandle } from '../../main.ts';
import { resolveConfig, type Flags } from '../../config/index.ts';
import { maskedRedisUrl } from '../../core/index.ts';
import { flushLog, log, logRuns, setLogFormat } from '../../logging/index.ts';
import { StopSignals } from '../stop-signals.ts';

/** `flags`: the server flags as the parser hands them. */
export async function serve(flags: Flags, withApi: boolean): Promise<number> {
  // Handlers first: a signal that arrives while the service starts (or just after it reports that
  // it listens) must still get a clean shutdown, never the default disposition. They stay for the
  // whole shutdown: a signal relayed a second time (npm start, a group signalled) is the same one.
  const stopSignals = new StopSignals(['SIGINT', 'SIGTERM'], undefined, (again) => log.info(`${again} received: already shutting down`));
  // Until the service runs, a SIGHUP has nothing to reload (and must not end the process).
  const ignoreHangup = () => {};
  process.on('SIGHUP', ignoreHangup);
  const config = await resolveConfig(flags, process.env);
  setLogFormat(config.logFormat);
  for (const warning of config.warnings) log.warn(warning);
  const troupe = withApi ? await startTroupe({ ...config, writeExample: true }) : undefined;
  const handle: EngineHandle = troupe ?? await openEngine({ ...config, writeExample: true });
  // The server logs a line as each run starts and ends (startTroupe); the scheduler alone does too.
  const stopRunLines = troupe ? () => {} : logRuns((listener) => handle.engine.subscribe(listener));
  // SIGHUP reloads the custom queues' limits, the remote nodes and the auth settings from the
  // configuration (docs/configuration.md). Auth first: settings it cannot use leave all as it was.
  process.on('SIGHUP', () => {
    resolveConfig(flags, process.env).then(
      async (reloaded) => {
        await troupe?.reloadAuth(reloaded.auth, reloaded.oidc);
        const queues = reloaded.queues;
        handle.engine.setQueueLimits(new Map(queues.map(({ name, maxConcurrency }) => [name, maxConcurrency])));
        troupe?.remoteNodes.replace(reloaded.remoteNodes);
        log.info(`SIGHUP: queues reloaded: ${queues.map(({ name, maxConcurrency }) => `${name}=${maxConcurrency}`).join(', ') || 'no custom queue'}`
          + (troupe ? `; remote nodes: ${troupe.remoteNodes.names().join(', ') || 'none'}; auth mode ${troupe.auth.mode}${troupe.auth.enabled ? '' : ' (no credentials asked)'}` : ''));
      },
    ).catch((error: unknown) => log.error(`SIGHUP: configuration not reloaded: ${(error as Error).message}`));
  });
  process.off('SIGHUP', ignoreHangup);
  // The Redis URL may hold a password: it is shown masked.
  const redis = config.redisUrl === undefined ? undefined : maskedRedisUrl(config.redisUrl);
  const workers = redis === undefined ? '' : `; workers through ${redis}`;
  if (troupe) {
    const url = `${troupe.server.scheme}://${config.host}:${troupe.server.port}/api/v2`;
    log.info({ url, carrier: troupe.server.carrier, home: config.home, redis }, `troupe listening on ${url} (${troupe.server.carrier}); home ${config.home}; steps start with ${troupe.spawnMethod}${config.ui ? `; dashboard ${url.replace(/\/api\/v2$/, '/')}` : ''}${workers}`);
  } else {
    log.info({ home: config.home, redis }, `troupe scheduler running (no API); home ${config.home}; steps start with ${handle.spawnMethod}${workers}`);
  }
  // With no server listening, nothing else keeps the process alive until the signal (the
  // scheduler's timers do not hold it open).
  const alive = setInterval(() => {}, 2 ** 30);
  const signal = await stopSignals.received;
  clearInterval(alive);
  const grace = config.shutdownGraceMs;
  if (grace > 0 && handle.engine.activeRuns().length > 0) {
    log.info(`${signal} received, admitting no runs; active runs have ${grace / 1000} s to finish (a second signal stops them now)`);
    stopSignals.onAgain((again) => {
      log.info(`${again} received, stopping runs now`);
      void handle.engine.close();
    });
  } else {
    log.info(`${signal} received, stopping runs and shutting down`);
  }
  try {
    if (!troupe) await handle.engine.drain(grace);
    await handle.close();
    stopRunLines();
  } catch (error) {
    log.error({ error: (error as Error).message }, 'shutdown failed');
    flushLog();
    return 1;
  }
  log.info('stopped');
  flushLog();
  return 0;
}
