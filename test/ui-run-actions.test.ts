// A run's page in a real headless Chromium against the real server: an ended run is retried from
// one step (the steps before it keep their results and do not run again), rescheduled (the new
// run's page opens), a failed step is marked succeeded by hand, and the run's outputs are listed;
// with authentication on, a viewer sees the outputs but none of these controls, an operator sees them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestServer } from './helpers.ts';
import { bearer, send, signIn, waitForRunAs } from './auth-support.ts';
import { closeBrowserOnServer, openBrowserOnServer, screenshot, signedInPage } from './support/browser.ts';

const PASSWORD = 'ui-run-password-1';

/** The badge of `testId` once it shows `status` (its data-status). */
async function statusShown(page: Page, testId: string, status: string): Promise<void> {
  await page.locator(`[data-testid="${testId}"][data-status="${status}"], [data-testid="${testId}"] [data-status="${status}"]`).first().waitFor({ timeout: 15_000 });
}

/** A two-step DAG: `first` counts its runs in a file, `second` fails until the file `go` exists. */
function twoSteps(home: string, tag: string): { spec: string; count: string; go: string } {
  const count = join(home, `count-${tag}`);
  const go = join(home, `go-${tag}`);
  const spec = [
    'steps:',
    '  - name: first',
    `    command: sh -c "echo ran >> '${count}'"`,
    '  - name: second',
    `    command: test -f '${go}'`,
    '    depends: [first]',
  ].join('\n');
  return { spec, count, go };
}

const nodeOf = (run: any, step: string) => run.nodes.find((n: any) => n.step.name === step);

describe('a run\'s actions in a browser', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let origin = '';

  before(async () => {
    ({ server, browser, context, origin } = await openBrowserOnServer());
  });
  after(() => closeBrowserOnServer({ server, browser }));

  test('Retry from here on the failed second step runs it again as a new attempt; the first step keeps its result and does not run again', async () => {
    const dag = twoSteps(server.home, 'retry');
    await server.writeDag('ui-retry-from', dag.spec);
    const failed = await server.startAndWait('ui-retry-from');
    assert.equal(failed.statusLabel, 'failed');
    const before = (await server.call('GET', `/dag-runs/ui-retry-from/${failed.dagRunId}`)).body.dagRunDetails;
    const attemptOf = async () => (await server.call('GET', `/dag-runs/ui-retry-from/${failed.dagRunId}/outputs`)).body.metadata.attemptId as string;
    const firstAttempt = await attemptOf();
    assert.ok(firstAttempt);
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-retry-from/${failed.dagRunId}`);
    await statusShown(page, 'node-status-second', 'failed');
    await page.getByTestId('reschedule-button').waitFor();
    await screenshot(page, 'run-actions');
    await writeFile(dag.go, '');
    await page.getByTestId('retry-from-second').click();
    await statusShown(page, 'run-status', 'succeeded');
    await statusShown(page, 'node-status-second', 'succeeded');
    const after = (await server.call('GET', `/dag-runs/ui-retry-from/${failed.dagRunId}`)).body.dagRunDetails;
    assert.equal(after.statusLabel, 'succeeded');
    assert.notEqual(await attemptOf(), firstAttempt, 'a new attempt');
    assert.equal(nodeOf(after, 'first').startedAt, nodeOf(before, 'first').startedAt, 'the first step kept its result');
    assert.equal(await readFile(dag.count, 'utf8'), 'ran\n', 'the first step ran once');
    await page.close();
  });

  test('Reschedule makes a new run of an ended one, and its page opens', async () => {
    await server.writeDag('ui-reschedule', 'steps:\n  - name: hello\n    command: echo hello\n');
    const first = await server.startAndWait('ui-reschedule');
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-reschedule/${first.dagRunId}`);
    await page.getByTestId('reschedule-button').click();
    await page.waitForURL((url) => /^\/runs\/ui-reschedule\/[^/]+$/.test(url.pathname) && !url.pathname.endsWith(`/${first.dagRunId}`));
    const newId = decodeURIComponent(page.url().split('/').pop()!);
    await statusShown(page, 'run-status', 'succeeded');
    const runs = (await server.call('GET', '/dag-runs?name=ui-reschedule')).body.dagRuns.map((r: any) => r.dagRunId);
    assert.deepEqual(new Set(runs), new Set([first.dagRunId, newId]));
    await page.close();
  });

  test('a failed step is marked succeeded from its row: the node shows succeeded and the API agrees', async () => {
    const dag = twoSteps(server.home, 'mark');
    await server.writeDag('ui-mark', dag.spec);
    const failed = await server.startAndWait('ui-mark');
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-mark/${failed.dagRunId}`);
    await statusShown(page, 'node-status-second', 'failed');
    await page.getByTestId('step-status-select-second').selectOption({ label: 'Succeeded' });
    await page.getByTestId('step-status-apply-second').click();
    await statusShown(page, 'node-status-second', 'succeeded');
    const run = (await server.call('GET', `/dag-runs/ui-mark/${failed.dagRunId}`)).body.dagRunDetails;
    assert.equal(nodeOf(run, 'second').statusLabel, 'succeeded');
    assert.equal(await page.getByTestId('step-status-error-second').count(), 0);
    await page.close();
  });

  test('a run\'s outputs are listed under its steps, and a run without any shows no outputs table', async () => {
    await server.writeDag('ui-outputs', 'steps:\n  - name: emit\n    command: echo forty-two\n    output: ANSWER\n');
    const run = await server.startAndWait('ui-outputs');
    const outputs = (await server.call('GET', `/dag-runs/ui-outputs/${run.dagRunId}/outputs`)).body.outputs;
    const [[key, value]] = Object.entries(outputs) as [string, string][];
    assert.equal(value, 'forty-two');
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-outputs/${run.dagRunId}`);
    assert.equal(await page.getByTestId('outputs-table').getByTestId(`output-${key}`).innerText(), 'forty-two');
    // The reschedule DAG has no output: its page has steps and no outputs table.
    const plain = await server.startAndWait('ui-reschedule');
    await page.goto(`${origin}/runs/ui-reschedule/${plain.dagRunId}`);
    await statusShown(page, 'node-status-hello', 'succeeded');
    await page.getByTestId('reschedule-button').waitFor();
    assert.equal(await page.getByTestId('outputs-table').count(), 0);
    await page.close();
  });
});

describe('a run\'s actions with authentication on', () => {
  let server: TestServer;
  let browser: Browser;
  let origin = '';
  let failedRun = '';

  const signedIn = (username: string, next: string) => signedInPage(browser, origin, username, PASSWORD, next);

  before(async () => {
    ({ server, browser, origin } = await openBrowserOnServer({ auth: { mode: 'builtin', admin: { username: 'ui-admin', password: PASSWORD } } }));
    const admin = bearer(await signIn(server, 'ui-admin', PASSWORD));
    for (const [username, role] of [['ui-viewer', 'viewer'], ['ui-operator', 'operator']]) {
      assert.equal((await send(server, 'POST', '/users', admin, { username, password: PASSWORD, role })).status, 201);
    }
    await server.writeDag('ui-guarded', 'steps:\n  - name: emit\n    command: echo shown\n    output: SHOWN\n  - name: broken\n    command: exit 3\n    depends: [emit]\n');
    failedRun = (await send(server, 'POST', '/dags/ui-guarded/start', admin, {})).body.dagRunId;
    assert.equal((await waitForRunAs(server, admin, 'ui-guarded', failedRun)).statusLabel, 'failed');
  });
  after(() => closeBrowserOnServer({ server, browser }));

  test('a viewer sees the failed run and its outputs but no Reschedule, Retry from here or step status; an operator sees them', async () => {
    const runPage = `/runs/ui-guarded/${failedRun}`;
    const viewer = await signedIn('ui-viewer', runPage);
    await statusShown(viewer, 'node-status-broken', 'failed');
    await viewer.getByTestId('outputs-table').waitFor();
    for (const testId of ['reschedule-button', 'retry-button', 'retry-from-broken', 'retry-from-emit', 'step-status-select-broken', 'step-status-apply-broken']) {
      assert.equal(await viewer.getByTestId(testId).count(), 0, testId);
    }
    await viewer.close();
    const operator = await signedIn('ui-operator', runPage);
    for (const testId of ['reschedule-button', 'retry-from-broken', 'step-status-select-broken', 'step-status-apply-broken']) {
      await operator.getByTestId(testId).waitFor();
    }
    await operator.close();
  });
});
