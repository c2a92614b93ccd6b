// A real headless Chromium for the dashboard's tests: Debian's package, driven by playwright-core
// (which downloads no browser of its own). A machine without it fails these tests with a line
// saying how to get it; they never skip.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { TroupeConfig } from '../../src/main.ts';
import { startTestServer, type TestServer } from '../helpers.ts';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * This machine's network is closed: without these flags Chromium keeps trying to reach Google's
 * services at start (background networking, component updates, sync, QUIC).
 */
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`the dashboard's tests need Debian's Chromium at ${CHROMIUM}: apt-get install chromium (.ci/run installs it)`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

/** A fresh browser profile (no cookies) with a laptop's window, in a fixed time zone and language. */
export function newContext(browser: Browser, options: { width?: number; height?: number } = {}): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width: options.width ?? 1280, height: options.height ?? 800 }, timezoneId: 'Europe/Paris', locale: 'en-GB' });
}

/** Where the screenshots of docs/ui.md go: written when TROUPE_SCREENSHOTS is set, so that a test run changes no file of the repository otherwise. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!process.env.TROUPE_SCREENSHOTS) return;
  const dir = join(import.meta.dirname, '..', '..', 'docs', 'ui');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
}

/** A browser suite's parts: a real server (uws), Chromium, one fresh profile, and the server's origin. */
export interface BrowserOnServer {
  server: TestServer;
  browser: Browser;
  context: BrowserContext;
  origin: string;
}

/** Starts what a browser suite drives; `closeBrowserOnServer` ends it (either part may be missing after a failed start). */
export async function openBrowserOnServer(config: Partial<TroupeConfig> = {}): Promise<BrowserOnServer> {
  const server = await startTestServer('uws', config);
  const browser = await launchBrowser().catch(async (error: unknown) => {
    await server.close();
    throw error;
  });
  return { server, browser, context: await newContext(browser), origin: new URL(server.base).origin };
}

export async function closeBrowserOnServer(parts: Partial<BrowserOnServer>): Promise<void> {
  await parts.browser?.close();
  await parts.server?.close();
}

/** A fresh browser profile (no cookie) signed in on /login as `username`, landing on `next`. */
export async function signedInPage(browser: Browser, origin: string, username: string, password: string, next: string): Promise<Page> {
  const page = await (await newContext(browser)).newPage();
  await page.goto(`${origin}/login?next=${encodeURIComponent(next)}`);
  await page.getByTestId('login-username').fill(username);
  await page.getByTestId('login-password').fill(password);
  await page.getByTestId('login-submit').click();
  await page.waitForURL(`${origin}${next}`);
  await page.getByTestId('signed-in-user').waitFor();
  return page;
}
