// The dashboard names the worker a run ran on: a real headless Chromium, the real server with
// distributed dispatch on a real redis-server, and a real `troupe worker`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext } from 'playwright-core';
import type { TestServer } from './helpers.ts';
import { redisMissing, startRedis, type RedisServer } from './redis-server.ts';
import { closeBrowserOnServer, openBrowserOnServer } from './support/browser.ts';
import { listedOn, startWorkerProcess, type WorkerProcess } from './support/troupe-worker.ts';

const missing = redisMissing();

describe('the dashboard and workers', { skip: missing && !process.env.CI ? missing : false }, () => {
  let redis: RedisServer;
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let origin = '';
  let worker: WorkerProcess;

  before(async () => {
    if (missing) throw new Error(missing);
    redis = await startRedis();
    ({ server, browser, context, origin } = await openBrowserOnServer({ redisUrl: redis.url }));
    const listed = listedOn(() => server);
    worker = await startWorkerProcess({ id: 'ui-gpu', redisUrl: redis.url, labels: 'gpu=true', maxActiveRuns: 2 }, listed);
  });

  after(async () => {
    await worker?.stop();
    await closeBrowserOnServer({ server, browser });
    await redis?.stop();
  });

  test('a run on a worker shows the worker on its page; a run on the server shows none', async () => {
    await server.writeDag('ui-remote', 'workerSelector:\n  gpu: "true"\nsteps:\n  - name: s\n    command: echo remote\n');
    await server.writeDag('ui-local', 'steps:\n  - name: s\n    command: echo local\n');
    const remote = await server.startAndWait('ui-remote');
    const local = await server.startAndWait('ui-local');
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-remote/${remote.dagRunId}`);
    assert.equal(await page.getByTestId('run-worker').textContent({ timeout: 15_000 }), 'ui-gpu');
    await page.goto(`${origin}/runs/ui-local/${local.dagRunId}`);
    await page.getByTestId('run-params').waitFor({ timeout: 15_000 });
    assert.equal(await page.getByTestId('run-worker').count(), 0);
    await page.close();
  });
});
