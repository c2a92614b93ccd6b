// A real headless Chromium for the dashboard's tests: Debian's package, driven by playwright-core
// (which downloads no browser of its own). A machine without it fails these tests with a line
// saying how to get it; they never skip.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

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
