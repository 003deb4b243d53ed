/**
 * The console's login in a real browser (Debian's Chromium, driven by playwright-core) against a
 * router that requires keys: the page shows a login form and reads nothing until logged in; a
 * bad key is refused on the page; a caller key of tenant acme logs in, the header shows the
 * tenant, the agent table and the live event stream load with the HttpOnly cookie (which the
 * page's script cannot read); logging out brings the form back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { openBrowser, type Browser } from '../support/browser.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = `admin-console-${'c'.repeat(40)}`;

let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let callerKey = '';

beforeAll(async () => {
  stack = await startStack({ env: { REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN } });
  const made = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body: { tenant: 'acme', role: 'caller', label: 'console test' },
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(made.status).toBe(201);
  callerKey = made.body.key;
  browser = await openBrowser();
  ({ context, page } = browser);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('the console login', () => {
  it('asks for a key, refuses a bad one, logs in with a caller key and shows its tenant', async () => {
    await page.goto(`${stack.routerUrl}/console`);
    await page.locator('#login-form').waitFor({ timeout: 10_000 });
    expect(await page.locator('#agents').count()).toBe(0);

    await page.fill('#login-key', 'not-a-key');
    await page.click('#login-form button');
    await expect
      .poll(() => page.locator('#login-message').innerText(), { timeout: 5000 })
      .toMatch(/UNAUTHORIZED/);

    await page.fill('#login-key', callerKey);
    await page.click('#login-form button');
    await page.locator('#tenant').waitFor({ timeout: 10_000 });
    expect(await page.locator('#tenant').innerText()).toBe('acme');
    expect(await page.locator('#who').innerText()).toMatch(/caller/);
    await page.locator('#agents tbody tr').first().waitFor({ timeout: 10_000 });
    await page.locator('#conn[data-state="live"]').waitFor({ timeout: 10_000 });
    // HttpOnly: the page's own script never sees the key.
    expect(String(await page.evaluate('document.cookie'))).not.toContain(callerKey);
    const cookies = await context.cookies(stack.routerUrl);
    expect(cookies.find((c) => c.name === 'reach_key')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });

    await page.click('#logout');
    await page.locator('#login-form').waitFor({ timeout: 10_000 });
    expect(browser.problems).toEqual([]);
  });
});
