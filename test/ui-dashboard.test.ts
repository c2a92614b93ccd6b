// The dashboard in a real headless Chromium against the real server: a DAG made through the API is
// found and started from its page, its run turns succeeded on screen without a reload, a step's log
// shows what the step writes while it still runs (colours shown, no escape codes), a running run
// is stopped from its page, and a spec error is fixed in the editor and saved.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { waitUntil, type TestServer } from './helpers.ts';
import { closeBrowserOnServer, newContext, openBrowserOnServer, screenshot } from './support/browser.ts';

/** The badge of `testId` once it shows `status` (its data-status). */
async function statusShown(page: Page, testId: string, status: string): Promise<void> {
  await page.locator(`[data-testid="${testId}"][data-status="${status}"], [data-testid="${testId}"] [data-status="${status}"]`).first().waitFor({ timeout: 15_000 });
}

describe('the dashboard in a browser', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let origin = '';

  before(async () => {
    ({ server, browser, context, origin } = await openBrowserOnServer());
  });
  after(() => closeBrowserOnServer({ server, browser }));

  test('a DAG created through the API is found on the DAGs page, started there, and its run turns succeeded without a reload', async () => {
    const created = await server.call('POST', '/dags', { name: 'ui-hello', spec: 'steps:\n  - name: greet\n    command: echo hello from the dashboard\n' });
    assert.equal(created.status, 201);
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    await page.getByTestId('dag-search').fill('ui-hello');
    await page.getByTestId('dag-row-ui-hello').waitFor();
    await screenshot(page, 'dags');
    await page.getByTestId('start-button-ui-hello').click();
    await page.waitForURL(/\/runs\/ui-hello\/[^/]+$/);
    // Marked once on the run page: a reload would lose it.
    await page.evaluate('window.stayed = true');
    await statusShown(page, 'run-status', 'succeeded');
    await statusShown(page, 'node-status-greet', 'succeeded');
    assert.equal(await page.evaluate('window.stayed'), true, 'the page was not reloaded');
    const dagRunId = page.url().split('/').pop()!;
    assert.equal((await server.call('GET', `/dag-runs/ui-hello/${dagRunId}`)).body.dagRun.statusLabel, 'succeeded');
    await screenshot(page, 'run');
    await page.close();
  });

  test('a step\'s log shows what the step writes while it still runs, its colours as colours and no escape codes', async () => {
    const go = join(server.home, 'GO-ui-log');
    await server.writeDag('ui-talk', [
      'steps:',
      '  - name: talk',
      '    script: |',
      "      echo first line; printf '\\033[31mred words\\033[0m plain\\n'",
      `      i=0; while [ ! -f '${go}' ]; do i=$((i+1)); [ $i -gt 400 ] && exit 7; sleep 0.05; done`,
      '      echo last line',
    ].join('\n'));
    const { dagRunId } = (await server.call('POST', '/dags/ui-talk/start', {})).body;
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-talk/${dagRunId}`);
    await page.getByTestId('step-button-talk').click();
    const log = page.getByTestId('log-view');
    await log.getByText('red words').waitFor();
    // Shown while the step waits: it ends only once GO exists.
    await statusShown(page, 'run-status', 'running');
    assert.match(await log.innerText(), /first line\s+red words plain/);
    const html = await log.innerHTML();
    assert.ok(!html.includes('\u001b') && !html.includes('[31m'), html);
    // The test's own TypeScript has no DOM types: the browser's functions are reached through globalThis.
    const colour = await log.getByText('red words').evaluate((element) => (globalThis as unknown as { getComputedStyle(node: unknown): { color: string } }).getComputedStyle(element).color);
    const [red, green, blue] = colour.match(/\d+/g)!.map(Number);
    assert.ok(red > 150 && green < 120 && blue < 120, `red words are red: ${colour}`);
    await screenshot(page, 'step-log');
    await writeFile(go, '');
    await log.getByText('last line').waitFor();
    await statusShown(page, 'run-status', 'succeeded');
    await page.close();
  });

  test('a running run is stopped from its page', async () => {
    await server.writeDag('ui-long', 'steps:\n  - name: nap\n    command: sleep 30\n');
    const { dagRunId } = (await server.call('POST', '/dags/ui-long/start', {})).body;
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-long/${dagRunId}`);
    await statusShown(page, 'run-status', 'running');
    await page.getByTestId('stop-button').click();
    await statusShown(page, 'run-status', 'aborted');
    assert.equal((await server.call('GET', `/dag-runs/ui-long/${dagRunId}`)).body.dagRun.statusLabel, 'aborted');
    await page.close();
  });

  test('a spec error is shown as one types, fixed in the editor, and saved', async () => {
    const good = 'steps:\n  - name: a\n    command: echo a\n';
    assert.equal((await server.call('POST', '/dags', { name: 'ui-edit', spec: good })).status, 201);
    const page = await context.newPage();
    await page.goto(`${origin}/dags/ui-edit`);
    const editor = page.getByTestId('spec-editor');
    await editor.waitFor();
    await editor.fill('steps:\n  - name: a\n    command: echo a\n    depends: [nowhere]\n');
    await page.getByTestId('spec-errors').getByText(/nowhere/).waitFor();
    // The problem names its line (4, the depends): that line is marked in the gutter beside the text, no other.
    assert.match(await page.getByTestId('spec-errors').innerText(), /line 4/i);
    await page.getByTestId('spec-bad-line-4').waitFor();
    assert.equal(await page.locator('[data-testid^="spec-bad-line-"]').count(), 1);
    await screenshot(page, 'dag');
    const fixed = 'steps:\n  - name: a\n    command: echo fixed\n';
    await editor.fill(fixed);
    await page.getByTestId('spec-valid').waitFor();
    await page.getByTestId('save-spec').click();
    await page.getByTestId('spec-saved').waitFor();
    assert.equal((await server.call('GET', '/dags/ui-edit/spec')).body.spec, fixed);
    await page.close();
  });

  test('the runs page filters by the days runs were created in, in the browser\'s time zone', async () => {
    const page = await context.newPage();
    // The browser's day (its time zone is Paris), as a date input gives it.
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris' }).format(new Date());
    await page.goto(`${origin}/runs?from=${today}&to=${today}&name=ui-hello`);
    await page.getByTestId('runs-table').waitFor();
    assert.equal(await page.getByTestId('runs-from-filter').inputValue(), today);
    await screenshot(page, 'runs');
    await page.getByTestId('runs-from-filter').fill('2099-01-01');
    await page.getByTestId('runs-to-filter').fill('2099-01-02');
    await page.getByTestId('runs-empty').waitFor();
    assert.match(page.url(), /from=2099-01-01/);
    await page.close();
  });

  test('a narrow window: no page is wider than the window (tables scroll inside); the keyboard alone reaches a DAG', async () => {
    const narrow = await newContext(browser, { width: 400, height: 800 });
    try {
      const page = await narrow.newPage();
      for (const path of ['/', '/runs', '/dags/ui-hello', '/queues', '/system']) {
        await page.goto(`${origin}${path}`);
        await page.locator('main h1').first().waitFor();
        await page.waitForLoadState('networkidle').catch(() => undefined);
        const width = await page.evaluate('document.documentElement.scrollWidth');
        assert.ok(Number(width) <= 400, `${path} is ${width} px wide in a 400 px window`);
      }
      await page.goto(`${origin}/`);
      await page.getByTestId('dag-link-ui-hello').waitFor();
      await screenshot(page, 'narrow');
      // Tab until the DAG's link has the focus, then Enter opens its page.
      for (let presses = 0; presses < 40; presses++) {
        await page.keyboard.press('Tab');
        if (await page.getByTestId('dag-link-ui-hello').evaluate((link) => link === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)) break;
      }
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/dags\/ui-hello$/);
      await page.getByTestId('dag-details').waitFor();
    } finally {
      await narrow.close();
    }
  });

  test('a deep link reloads the page it names; a failed action shows the API\'s message', async () => {
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-hello/no-such-run`);
    const alert = page.getByTestId('error-alert');
    await alert.first().waitFor();
    assert.match(await alert.first().innerText(), /no-such-run/);
    await page.goto(`${origin}/queues`);
    await page.getByTestId('queues-table').or(page.getByTestId('queues-empty')).first().waitFor();
    await page.goto(`${origin}/system`);
    await page.getByTestId('health-status').waitFor();
    await waitUntil(async () => /healthy/i.test(await page.getByTestId('health-status').innerText()), 5_000);
    // The key figures are the metrics' own, and the four resource charts are drawn.
    const dags = (await server.call('GET', '/dags?perPage=1')).body.pagination.totalRecords;
    await page.getByTestId('metrics-table').waitFor();
    assert.equal(await page.getByTestId('metric-troupe_dags_total').innerText(), String(dags));
    assert.match(await page.getByTestId('metric-runs-ended').innerText(), /succeeded \d+/);
    for (const series of ['cpu', 'memory', 'disk', 'load']) await page.getByTestId(`resource-chart-${series}`).waitFor();
    await screenshot(page, 'system');
    await page.close();
  });
});
