// The dashboard on a big home: 1,000 DAGs and 100,000 finished runs (written through the store; the
// API would take an hour to make them), every page loaded in a real Chromium. The time each page
// took to be ready is printed (docs/ui.md quotes it); the test asserts only that each page shows
// what it should, since timing never goes into an assertion here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { RunStatus, type RunRecord } from '../src/core/index.ts';
import { startTestServer, type TestServer } from './helpers.ts';
import { launchBrowser, newContext } from './support/browser.ts';

const DAGS = 1000;
const RUNS = 100_000;
const STATUSES = [RunStatus.Succeeded, RunStatus.Succeeded, RunStatus.Succeeded, RunStatus.Failed, RunStatus.Aborted];
/** Three days ago: the runs, a second apart, stay within the default retention. */
const BASE_MS = Date.now() - 3 * 86_400_000;

function run(index: number, name: string, logs: string): RunRecord {
  const iso = new Date(BASE_MS + index * 1000).toISOString();
  const dagRunId = `r${String(index).padStart(7, '0')}`;
  return {
    name, dagRunId, attemptId: `a${index}`, rootDAGRunName: name, rootDAGRunId: dagRunId, parentDAGRunName: '', parentDAGRunId: '',
    status: STATUSES[index % STATUSES.length], queuedAt: '', startedAt: iso, finishedAt: iso, log: join(logs, `${dagRunId}.log`), params: '{}',
    nodes: [{ step: { name: 's1', command: 'true' }, status: 4, stdout: join(logs, `${dagRunId}.s1.out`), stderr: '', startedAt: iso, finishedAt: iso,
      retryCount: 0, doneCount: 0, error: '', subRuns: [], subRunsRepeated: [] } as never],
    createdAtMs: BASE_MS + index * 1000,
  };
}

let server: TestServer;
let browser: Browser;
const names = Array.from({ length: DAGS }, (_, index) => `big-${String(index).padStart(4, '0')}`);

before(async () => {
  server = await startTestServer('uws');
  await Promise.all(names.map((name, index) => writeFile(join(server.home, 'dags', `${name}.yaml`),
    `description: fixture ${index}\ntags:\n  - t${index % 10}\nsteps:\n  - name: s1\n    command: "true"\n`)));
  // 30% of the runs on the first DAG, the rest spread over the others; 5,000 per transaction.
  const logs = join(server.home, 'logs');
  for (let start = 0; start < RUNS; start += 5000) {
    const batch: Promise<void>[] = [];
    for (let index = start; index < Math.min(RUNS, start + 5000); index++) {
      batch.push(server.troupe.runs.save(run(index, index % 10 < 3 ? names[0] : names[1 + (index % (DAGS - 1))], logs)));
    }
    await Promise.all(batch);
  }
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('every page is ready with 1,000 DAGs and 100,000 runs in the store; the time each took is printed', async () => {
  const origin = new URL(server.base).origin;
  const newest = `r${String(RUNS - 1).padStart(7, '0')}`;
  const newestDag = (RUNS - 1) % 10 < 3 ? names[0] : names[1 + ((RUNS - 1) % (DAGS - 1))];
  const pages: Array<[string, string]> = [
    ['/', 'dags-table'],
    ['/runs', 'runs-table'],
    [`/dags/${names[0]}`, 'dag-runs-table'],
    [`/runs/${newestDag}/${newest}`, 'node-table'],
    ['/queues', 'queues-table'],
    ['/system', 'system-table'],
  ];
  const context = await newContext(browser);
  const figures: Record<string, number[]> = {};
  // A first load warms the browser's cache of the page's script, as an operator's second visit would.
  const warm = await context.newPage();
  await warm.goto(`${origin}/system`);
  await warm.getByTestId('system-table').waitFor({ timeout: 30_000 });
  await warm.close();
  // Each page twice: the first visit after the files were written finds the server's listings cold.
  for (const round of [0, 1]) {
    for (const [path, ready] of pages) {
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(`${origin}${path}`);
      const shown = path === '/queues' ? page.getByTestId('queues-table').or(page.getByTestId('queues-empty')) : page.getByTestId(ready);
      await shown.first().waitFor({ timeout: 30_000 });
      (figures[path] ??= [])[round] = Math.round(performance.now() - started);
      if (path === '/') assert.equal(await page.getByTestId(`dag-row-${names[0]}`).count(), 1, 'the first page of DAGs lists the first DAG');
      if (path === '/runs') await page.getByTestId(`run-row-${newest}`).waitFor();
      assert.equal(await page.getByTestId('error-alert').count(), 0, `${path} showed an error`);
      await page.close();
    }
  }
  await context.close();
  console.log(`# time to ready (ms: first visit, second), ${DAGS} DAGs and ${RUNS} runs: ${JSON.stringify(figures)}`);
});
