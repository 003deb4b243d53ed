/**
 * A real browser for the console's tests: Debian's Chromium (or CHROMIUM_PATH) driven by
 * playwright-core, in a throwaway profile. Page errors and console errors (other than failed
 * requests, which the page shows) are collected in `problems`, which a test expects to stay empty. Screenshots go to test/artifacts (ignored).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where tests leave their screenshots: a scratch folder, never tracked files. */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

/** An open browser with one page. */
export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors seen so far. */
  problems: string[];
  /** Saves a full-page screenshot as test/artifacts/<name>.png. */
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts Chromium with a fresh profile and one page. */
export async function openBrowser(
  viewport: { width: number; height: number } = { width: 1360, height: 1000 },
): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'reach-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // A 4xx the page answers on screen is logged by Chromium as a failed resource: not a fault.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) {
      problems.push(`console error: ${msg.text()}`);
    }
  });
  return {
    context,
    page,
    problems,
    async screenshot(name) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
