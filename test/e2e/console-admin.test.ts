/**
 * The console's admin pages in a real browser (Debian's Chromium, driven by playwright-core)
 * against a router that requires keys, with two tenants: as an operator, the dead-letters page
 * lists every tenant's dead letters, a capability filter narrows them and survives a reload,
 * Replay (the task then completes) and Replay selected send them again; the schedules page pauses,
 * resumes and deletes; the tenants page sets a tenant's record, makes a key shown once, filters
 * keys and revokes one (which the API then refuses). A caller of tenant acme sees only acme's dead
 * letters and schedules (with the buttons the API allows it there), and the tenants page tells it
 * that it is for operators, with no button. Leaves screenshots at
 * test/artifacts/console-{dead-letters,schedules,tenants}.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { NonRetryableError, ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { openBrowser, type Browser } from '../support/browser.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = `admin-console-admin-${'a'.repeat(40)}`;

let stack: Stack;
let agent: ReachAgent;
let browser: Browser;
let page: Page;
const key: Record<string, string> = {};
/** Schedule ids (made by the API) by name: ticker and weekly are acme's, gWeekly globex's. */
const sched: Record<string, string> = {};
/** `fragile` and `brittle` tasks fail (not retryable) until this turns false. */
let failing = true;

const api = <T = Record<string, unknown>>(
  path: string,
  as: string,
  init: { method?: string; body?: unknown } = {},
) =>
  http<T>(`${stack.routerUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${as}` },
  });

type Dlq = { items: { task_id: string }[] };
const deadIds = async () =>
  (await api<Dlq>('/v1/dlq', ADMIN)).body.items.map((i) => i.task_id).sort();

/** Logs the browser in with `apiKey` (the login form itself is console-login.test.ts's). */
async function logIn(apiKey: string): Promise<void> {
  await browser.context.clearCookies();
  const res = await page.request.post(`${stack.routerUrl}/v1/console/login`, {
    data: { key: apiKey },
  });
  expect(res.status()).toBe(200);
}

/** Opens a console page and waits for its table to have loaded. */
async function open(path: string, table: string): Promise<void> {
  await page.goto(`${stack.routerUrl}${path}`);
  await page.locator(`${table} tbody tr`).first().waitFor({ timeout: 10_000 });
}

/** Polls what the page shows, with room for a loaded machine (vitest's default is 1 s). */
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 5000 });

/**
 * The `attr` of each row of a table, sorted, read in one go in the page (a list being re-drawn
 * between two reads would leave the second waiting for a row that is gone).
 */
const rowIds = async (table: string, attr: string): Promise<string[]> => {
  const selector = JSON.stringify(`${table} tbody tr[${attr}]`);
  const ids = await page.evaluate(
    `[...document.querySelectorAll(${selector})].map((r) => r.getAttribute(${JSON.stringify(attr)}))`,
  );
  return (ids as string[]).sort();
};

beforeAll(async () => {
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN },
  });
  for (const tenant of ['acme', 'globex']) {
    const made = await api<{ key: string }>('/v1/keys', ADMIN, {
      body: { tenant, role: 'caller', label: `${tenant} app` },
    });
    expect(made.status).toBe(201);
    key[tenant] = made.body.key;
  }
  // One agent serving every tenant (registered shared by the operator key).
  agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId: 'admin-worker',
    capabilities: ['fragile', 'brittle', 'tick'],
    maxConcurrency: 8,
    apiKey: ADMIN,
    shared: true,
    handler: async (task: TaskContext) => {
      if (task.capability !== 'tick' && failing) throw new NonRetryableError('asked to fail');
      return { ok: true };
    },
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agent.start();
  await agent.ready();

  const tasks: [string, string, string][] = [
    ['acme', 'a-1', 'fragile'],
    ['acme', 'a-2', 'fragile'],
    ['acme', 'b-1', 'brittle'],
    ['globex', 'g-1', 'fragile'],
    ['globex', 'g-2', 'fragile'],
  ];
  for (const [tenant, task_id, capability] of tasks) {
    const sub = await api('/v1/tasks', key[tenant]!, {
      body: { task_id, capability, payload: {} },
    });
    expect(sub.status).toBe(202);
  }
  const week = 7 * 24 * 3600_000;
  const schedules: [string, string, number, string][] = [
    ['ticker', 'acme', 1000, 'tick'],
    ['weekly', 'acme', week, 'fragile'],
    ['gWeekly', 'globex', week, 'fragile'],
  ];
  for (const [name, tenant, every_ms, capability] of schedules) {
    const made = await api<{ schedule_id: string }>('/v1/schedules', key[tenant]!, {
      body: { every_ms, task: { capability, payload: {} } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    sched[name] = made.body.schedule_id;
  }
  await waitFor(
    async () =>
      (await deadIds()).join() === 'acme/a-1,acme/a-2,acme/b-1,globex/g-1,globex/g-2' || undefined,
    { timeoutMs: 10_000, message: 'the tasks were not dead-lettered' },
  );
  browser = await openBrowser();
  page = browser.page;
  // A step that cannot happen fails with its own name, not the test's timeout.
  page.setDefaultTimeout(10_000);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await stack?.stop();
});

describe('the console admin pages, as an operator', () => {
  it('lists dead letters, filters them in the URL, inspects and replays one and a selection', async () => {
    await logIn(ADMIN);
    await open('/console/dead-letters', '#dlq');
    expect(await rowIds('#dlq', 'data-task-id')).toEqual([
      'acme/a-1',
      'acme/a-2',
      'acme/b-1',
      'globex/g-1',
      'globex/g-2',
    ]);
    const g1 = page.locator('#dlq tr[data-task-id="globex/g-1"]');
    expect(await g1.locator('td[data-reason]').innerText()).toBe('not_retryable');
    expect(await g1.locator('a').getAttribute('href')).toBe('/console/tasks/globex%2Fg-1');

    // A capability filter narrows the list, is in the URL, and a reload keeps it.
    await page.fill('#dlq-filters-capability', 'brittle');
    await page.click('#dlq-filters button[type="submit"]');
    await poll(() => rowIds('#dlq', 'data-task-id')).toEqual(['acme/b-1']);
    expect(new URL(page.url()).searchParams.get('capability')).toBe('brittle');
    await page.reload();
    await page.locator('#dlq tr[data-task-id]').first().waitFor({ timeout: 10_000 });
    expect(await rowIds('#dlq', 'data-task-id')).toEqual(['acme/b-1']);
    expect(await page.inputValue('#dlq-filters-capability')).toBe('brittle');
    // A reason none has: nothing matches.
    await page.selectOption('#dlq-filters-reason', 'deadline');
    await poll(() => page.locator('#dlq tbody').innerText()).toMatch(/No dead letters match/);
    expect(page.url()).toMatch(/reason=deadline/);

    // Paging: a limit in the URL, and "Show more" raises it.
    await page.goto(`${stack.routerUrl}/console/dead-letters?limit=2`);
    await page.locator('#dlq tr[data-task-id]').first().waitFor({ timeout: 10_000 });
    expect(await page.locator('#dlq tr[data-task-id]').count()).toBe(2);
    await page.click('button[data-action="more"]');
    await poll(() => page.locator('#dlq tr[data-task-id]').count()).toBe(5);
    expect(new URL(page.url()).searchParams.get('limit')).toBe('52');
    expect(await page.locator('button[data-action="more"]').isVisible()).toBe(false);

    await page.goto(`${stack.routerUrl}/console/dead-letters`);
    await g1.waitFor({ timeout: 10_000 });
    // Inspect shows the last error.
    await g1.locator('button[data-action="inspect"]').click();
    expect(
      await page
        .locator('#dlq tr[data-detail-of="globex/g-1"] pre[data-field="error"]')
        .innerText(),
    ).toMatch(/asked to fail/);

    // Replay one: the row says so, and the task runs again and completes.
    failing = false;
    await g1.locator('button[data-action="replay"]').click();
    await poll(() => g1.getAttribute('data-state')).toBe('replayed');
    expect(await g1.locator('.row-result').innerText()).toMatch(/attempt 2/);
    await waitFor(
      async () =>
        (await api<{ status: string }>('/v1/tasks/g-1', key.globex!)).body.status === 'completed' ||
        undefined,
      { timeoutMs: 10_000, message: 'the replayed task did not complete' },
    );

    // Replay a selection: one request each, each row showing its result.
    for (const id of ['acme/a-1', 'acme/a-2'])
      await page.check(`#dlq tr[data-task-id="${id}"] input[type="checkbox"]`);
    expect(await page.locator('#dlq-selected').innerText()).toBe('2 selected');
    await page.click('button[data-action="replay-selected"]');
    await poll(() => page.locator('#dlq-status').innerText()).toBe('Replayed 2 of 2.');
    expect(await page.locator('#dlq tr[data-state="replayed"]').count()).toBe(3);

    // Replayed dead letters leave the list.
    await page.reload();
    await page.locator('#dlq tr[data-task-id]').first().waitFor({ timeout: 10_000 });
    expect(await rowIds('#dlq', 'data-task-id')).toEqual(['acme/b-1', 'globex/g-2']);
    await browser.screenshot('console-dead-letters');
  });

  it('pauses, resumes and deletes schedules', async () => {
    // The ticker has fired: its last task is linked.
    await waitFor(
      async () =>
        (await api<{ last_task_id?: string }>(`/v1/schedules/${sched.ticker}`, key.acme!)).body
          .last_task_id || undefined,
      { timeoutMs: 10_000, message: 'the ticker never fired' },
    );
    await open('/console/schedules', '#schedules');
    expect(await rowIds('#schedules', 'data-schedule-id')).toEqual(
      [`acme/${sched.ticker}`, `acme/${sched.weekly}`, `globex/${sched.gWeekly}`].sort(),
    );
    const ticker = page.locator(`#schedules tr[data-schedule-id="acme/${sched.ticker}"]`);
    expect(await ticker.getAttribute('data-state')).toBe('active');
    expect(await ticker.locator('td[data-field="last"] a').getAttribute('href')).toMatch(
      new RegExp(`^/console/tasks/acme%2F${sched.ticker}%3A\\d+$`),
    );

    // A capability filter, in the URL.
    await page.fill('#schedule-filters-capability', 'tick');
    await page.click('#schedule-filters button[type="submit"]');
    await poll(() => rowIds('#schedules', 'data-schedule-id')).toEqual([`acme/${sched.ticker}`]);
    expect(page.url()).toMatch(/capability=tick/);

    await ticker.locator('button[data-action="pause"]').click();
    await poll(() => ticker.getAttribute('data-state')).toBe('paused');
    expect(await ticker.locator('td[data-field="next"]').innerText()).toBe('paused');
    expect(
      (await api<{ paused: boolean }>(`/v1/schedules/${sched.ticker}`, key.acme!)).body.paused,
    ).toBe(true);
    await ticker.locator('button[data-action="resume"]').click();
    await poll(() => ticker.getAttribute('data-state')).toBe('active');
    expect(
      (await api<{ paused: boolean }>(`/v1/schedules/${sched.ticker}`, key.acme!)).body.paused,
    ).toBe(false);

    await page.goto(`${stack.routerUrl}/console/schedules`);
    const weekly = page.locator(`#schedules tr[data-schedule-id="acme/${sched.weekly}"]`);
    await weekly.waitFor({ timeout: 10_000 });
    await weekly.locator('button[data-action="delete"]').click();
    await weekly.locator('button[data-action="confirm-delete"]').click();
    await weekly.waitFor({ state: 'detached', timeout: 5000 });
    expect((await api(`/v1/schedules/${sched.weekly}`, key.acme!)).status).toBe(404);
    await browser.screenshot('console-schedules');
  });

  it('sets a tenant record, makes a key shown once, filters keys and revokes one', async () => {
    await open('/console/tenants', '#keys');
    // A tenant's record, set through the form.
    await page.fill('#tenant-name', 'acme');
    await page.fill('#tenant-weight', '3');
    await page.click('#tenant-form button[type="submit"]');
    const acme = page.locator('#tenants tr[data-tenant="acme"]');
    await acme.waitFor({ timeout: 5000 });
    expect(await acme.locator('td[data-field="weight"]').innerText()).toBe('3');
    expect((await api<{ weight: number }>('/v1/tenants/acme', ADMIN)).body.weight).toBe(3);
    // Edit puts the record in the form; a change saved shows on the row.
    await page.fill('#tenant-name', '');
    await acme.locator('button[data-action="edit"]').click();
    expect(await page.inputValue('#tenant-name')).toBe('acme');
    expect(await page.inputValue('#tenant-weight')).toBe('3');
    await page.fill('#tenant-max_inflight', '5');
    await page.click('#tenant-form button[type="submit"]');
    await poll(() => acme.locator('td[data-field="max_inflight"]').innerText()).toBe('5');
    expect(await acme.locator('td[data-field="weight"]').innerText()).toBe('3');

    // A key, shown this once.
    await page.fill('#key-tenant', 'initech');
    await page.selectOption('#key-role', 'caller');
    await page.fill('#key-label', 'ci bot');
    await page.click('#key-form button[type="submit"]');
    const secret = await page.locator('#new-key-value').innerText({ timeout: 5000 });
    expect(secret).toMatch(/^rk_/);
    expect(await page.locator('#new-key').innerText()).toMatch(/will not be shown again/);
    const keyId = (await page.locator('#new-key').getAttribute('data-key-id')) ?? '';
    const row = page.locator(`#keys tr[data-key-id="${keyId}"]`);
    await row.waitFor({ timeout: 5000 });
    expect(await row.innerText()).toMatch(/initech[\s\S]*caller[\s\S]*ci bot/);
    expect((await api('/v1/dlq', secret)).status).toBe(200);

    // A tenant filter in the URL; after a reload the key is listed, its secret gone.
    await page.fill('#key-filters-tenant', 'initech');
    await page.click('#key-filters button[type="submit"]');
    await poll(() => rowIds('#keys', 'data-key-id')).toEqual([keyId]);
    await page.reload();
    await row.waitFor({ timeout: 10_000 });
    expect(await rowIds('#keys', 'data-key-id')).toEqual([keyId]);
    expect(await page.locator('#new-key').count()).toBe(0);
    expect(await page.locator('body').innerText()).not.toContain(secret);

    // Revoke, after asking: the row leaves and the API refuses the key.
    await row.locator('button[data-action="revoke"]').click();
    await row.locator('button[data-action="confirm-revoke"]').click();
    await row.waitFor({ state: 'detached', timeout: 5000 });
    expect(await page.locator('#key-status').innerText()).toMatch(/revoked/);
    await waitFor(async () => (await api('/v1/dlq', secret)).status === 401 || undefined, {
      timeoutMs: 5000,
      message: 'the revoked key was still taken',
    });
    await browser.screenshot('console-tenants');
  });
});

describe('the console admin pages, as a caller', () => {
  it("shows acme's caller only acme's rows, and the tenants page is for operators", async () => {
    await logIn(key.acme!);
    await open('/console/dead-letters', '#dlq');
    expect(await rowIds('#dlq', 'data-task-id')).toEqual(['b-1']);
    // The API lets a caller replay its own tenant's dead letters: the button is there.
    expect(
      await page.locator('#dlq tr[data-task-id="b-1"] button[data-action="replay"]').count(),
    ).toBe(1);
    await open('/console/schedules', '#schedules');
    expect(await rowIds('#schedules', 'data-schedule-id')).toEqual([sched.ticker]);
    expect(await page.locator('#page').innerText()).not.toMatch(/globex/);

    await page.goto(`${stack.routerUrl}/console/tenants`);
    const note = page.locator('#operators-only');
    await note.waitFor({ timeout: 10_000 });
    expect(await note.innerText()).toMatch(/Operators only[\s\S]*caller key of tenant acme/);
    expect(await page.locator('#page button, #page form').count()).toBe(0);
    expect(browser.problems).toEqual([]);
  });
});
