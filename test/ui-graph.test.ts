// The dashboard's steps graph, history grid and sub DAG run pages in a real headless Chromium
// against the real server: a diamond drawn with its four steps and four arrows, coloured live as a
// run started through the API goes; a grid of two runs where the failed step's cell says failed;
// a DAG calling another links to the sub run, whose page shows its own steps and logs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestServer } from './helpers.ts';
import { closeBrowserOnServer, openBrowserOnServer, screenshot } from './support/browser.ts';

/** The element of `testId` once its data-status is `status`. */
async function statusShown(page: Page, testId: string, status: string): Promise<void> {
  await page.locator(`[data-testid="${testId}"][data-status="${status}"]`).waitFor({ timeout: 15_000 });
}

const diamond = ['a', 'b', 'c', 'd'];

describe('the steps graph, the history grid and sub DAG runs in a browser', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let origin = '';

  before(async () => {
    ({ server, browser, context, origin } = await openBrowserOnServer());
  });
  after(() => closeBrowserOnServer({ server, browser }));

  test('a diamond is drawn as four steps and four arrows, and a run started through the API colours them live on the DAG and run pages', async () => {
    const go = join(server.home, 'GO-ui-diamond');
    const goB = join(server.home, 'GO-ui-diamond-b');
    const wait = (file: string) => `i=0; while [ ! -f '${file}' ]; do i=$((i+1)); [ $i -gt 400 ] && exit 7; sleep 0.05; done`;
    await server.writeDag('ui-diamond', [
      'type: graph',
      'steps:',
      '  - name: a',
      `    script: ${wait(go)}`,
      '  - name: b',
      `    script: ${wait(goB)}; echo b`,
      '    depends: [a]',
      '  - name: c',
      '    command: echo c',
      '    depends: [a]',
      '  - name: d',
      '    command: echo d',
      '    depends: [b, c]',
    ].join('\n'));
    const dagPage = await context.newPage();
    await dagPage.goto(`${origin}/dags/ui-diamond`);
    const graph = dagPage.getByTestId('dag-graph');
    await graph.waitFor();
    for (const step of diamond) await statusShown(dagPage, `graph-node-${step}`, 'none');
    assert.equal(await graph.locator('[data-testid^="graph-node-"]').count(), 4);
    const edges = await graph.locator('[data-testid^="graph-edge-"]').evaluateAll((paths) => paths.map((p) => (p as unknown as { dataset: { testid: string } }).dataset.testid).sort());
    assert.deepEqual(edges, ['graph-edge-a-b', 'graph-edge-a-c', 'graph-edge-b-d', 'graph-edge-c-d']);
    // Left to right: a before b and c, which come before d.
    const x = async (step: string) => (await dagPage.getByTestId(`graph-node-${step}`).boundingBox())!.x;
    assert.ok(await x('a') < await x('b') && await x('b') === await x('c') && await x('c') < await x('d'));
    assert.match((await dagPage.getByTestId('graph-node-a').getAttribute('aria-label'))!, /a: not run/);
    await dagPage.evaluate('window.stayed = true');

    const { dagRunId } = (await server.call('POST', '/dags/ui-diamond/start', {})).body;
    const runPage = await context.newPage();
    await runPage.goto(`${origin}/runs/ui-diamond/${dagRunId}`);
    await statusShown(runPage, 'graph-node-a', 'running');
    await statusShown(dagPage, 'graph-node-a', 'running');
    await runPage.evaluate('window.stayed = true');
    await writeFile(go, '');
    // While b waits, only step events tell the DAG page that a ended and b started.
    await statusShown(dagPage, 'graph-node-a', 'succeeded');
    await statusShown(dagPage, 'graph-node-b', 'running');
    await statusShown(runPage, 'graph-node-a', 'succeeded');
    await writeFile(goB, '');
    for (const step of diamond) await statusShown(runPage, `graph-node-${step}`, 'succeeded');
    for (const step of diamond) await statusShown(dagPage, `graph-node-${step}`, 'succeeded');
    assert.equal(await runPage.evaluate('window.stayed'), true, 'the run page was not reloaded');
    assert.equal(await dagPage.evaluate('window.stayed'), true, 'the DAG page was not reloaded');
    assert.equal(await runPage.getByTestId('graph-node-d').getAttribute('aria-label'), 'Step d: succeeded');

    // A node opens its step's log, as the table's step button does.
    await runPage.getByTestId('graph-node-b').click();
    await runPage.getByTestId('log-view').getByText('b', { exact: true }).waitFor();
    assert.match(runPage.url(), /[?&]step=b/);
    assert.equal(await runPage.getByTestId('graph-node-b').getAttribute('aria-pressed'), 'true');
    await screenshot(runPage, 'dag-graph');
    await runPage.close();
    await dagPage.close();
  });

  test('a DAG of 240 steps is drawn whole in a graph that scrolls, each step in its own place', async () => {
    const lines = ['type: graph', 'steps:'];
    for (let layer = 0; layer < 12; layer++) {
      for (let i = 0; i < 20; i++) {
        lines.push(`  - name: s${layer}-${i}`, '    command: "true"');
        if (layer > 0) lines.push(`    depends: [s${layer - 1}-${(i * 7) % 20}, s${layer - 1}-${(i * 3 + 5) % 20}]`);
      }
    }
    await server.writeDag('ui-big', lines.join('\n'));
    const page = await context.newPage();
    await page.goto(`${origin}/dags/ui-big`);
    const graph = page.getByTestId('dag-graph');
    await graph.waitFor();
    assert.equal(await graph.locator('[data-testid^="graph-node-"]').count(), 240);
    const box = await graph.evaluate((el) => {
      const e = el as unknown as { scrollWidth: number; clientWidth: number; scrollHeight: number; clientHeight: number };
      return { scrolls: e.scrollWidth > e.clientWidth && e.scrollHeight > e.clientHeight };
    });
    assert.ok(box.scrolls, 'the graph scrolls both ways inside the page');
    const places = await graph.locator('[data-testid^="graph-node-"]').evaluateAll((nodes) => nodes.map((n) => (n as unknown as { getAttribute(name: string): string }).getAttribute('transform')));
    assert.equal(new Set(places).size, 240);
    await page.getByTestId('graph-node-s11-19').scrollIntoViewIfNeeded();
    assert.ok(await page.getByTestId('graph-node-s11-19').isVisible());
    await page.close();
  });

  test('the history grid shows a cell per step and run, the failed step\'s cell saying failed, and each column links to its run', async () => {
    await server.writeDag('ui-history', [
      'params: FAIL=0',
      'steps:',
      '  - name: fetch',
      '    command: echo fetched',
      '  - name: check',
      '    script: test "$FAIL" = 0',
    ].join('\n'));
    const good = await server.startAndWait('ui-history');
    const bad = await server.startAndWait('ui-history', { params: '{"FAIL":"1"}' });
    assert.equal(good.statusLabel, 'succeeded');
    assert.equal(bad.statusLabel, 'failed');
    const page = await context.newPage();
    await page.goto(`${origin}/dags/ui-history`);
    const grid = page.getByTestId('history-grid');
    await grid.waitFor();
    await statusShown(page, `history-cell-fetch-${good.dagRunId}`, 'succeeded');
    await statusShown(page, `history-cell-check-${good.dagRunId}`, 'succeeded');
    await statusShown(page, `history-cell-fetch-${bad.dagRunId}`, 'succeeded');
    await statusShown(page, `history-cell-check-${bad.dagRunId}`, 'failed');
    const failed = page.getByTestId(`history-cell-check-${bad.dagRunId}`);
    assert.equal(await failed.getAttribute('aria-label'), 'check: failed');
    assert.equal(await failed.innerText(), 'failed');
    assert.equal(await grid.locator('[data-testid^="history-cell-"]').count(), 4);
    // Newest first: the failed run's column comes before the good one's.
    const heads = await grid.locator('[data-testid^="history-run-"]').evaluateAll((links) => links.map((a) => (a as unknown as { dataset: { testid: string } }).dataset.testid));
    assert.deepEqual(heads, [`history-run-${bad.dagRunId}`, `history-run-${good.dagRunId}`]);
    // The graph shows the latest run: the failed one.
    await statusShown(page, 'graph-node-check', 'failed');
    await screenshot(page, 'history');
    await page.getByTestId(`history-run-${bad.dagRunId}`).click();
    await page.waitForURL(`${origin}/runs/ui-history/${bad.dagRunId}`);
    await page.getByTestId('node-status-check').and(page.locator('[data-status="failed"]')).waitFor();
    await page.close();
  });

  test('a step that called a DAG links to the sub run, whose page shows its own steps, graph and logs', async () => {
    await server.writeDag('ui-child', ['steps:', '  - name: inner', '    command: echo inside the child', '  - name: last', '    command: echo child done'].join('\n'));
    await server.writeDag('ui-parent', ['steps:', '  - name: delegate', '    call: ui-child', '  - name: after', '    command: echo parent done'].join('\n'));
    const run = await server.startAndWait('ui-parent');
    assert.equal(run.statusLabel, 'succeeded');
    const page = await context.newPage();
    await page.goto(`${origin}/runs/ui-parent/${run.dagRunId}`);
    const link = page.getByTestId('sub-run-link-delegate');
    await link.waitFor();
    assert.equal(await page.getByTestId('sub-run-link-after').count(), 0);
    await link.click();
    await page.waitForURL(new RegExp(`/runs/ui-parent/${run.dagRunId}/sub/[^/]+$`));
    await page.getByTestId('node-row-inner').waitFor();
    await statusShown(page, 'graph-node-inner', 'succeeded');
    await statusShown(page, 'graph-node-last', 'succeeded');
    assert.equal(await page.getByTestId('node-row-delegate').count(), 0, 'the parent\'s steps are not shown');
    assert.match(await page.locator('h1').innerText(), /ui-child/);
    await page.getByTestId('step-button-inner').click();
    await page.getByTestId('log-view').getByText('inside the child').waitFor();
    // Reloaded, the sub run's address still shows it.
    await page.reload();
    await statusShown(page, 'graph-node-last', 'succeeded');
    await page.getByTestId('root-run-link').click();
    await page.waitForURL(`${origin}/runs/ui-parent/${run.dagRunId}`);
    await page.getByTestId('node-row-delegate').waitFor();
    await page.close();
  });
});
