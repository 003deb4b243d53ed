/**
 * The console's tasks page in a real browser (Chromium), logged in with tenant acme's caller key
 * against a router that requires keys and archives to InfluxDB with a 2 s retention (so finished
 * tasks are read back from the archive, payload included): the list shows completed, running and
 * dead-lettered tasks; a capability filter narrows it, sits in the URL and survives a reload; a
 * bad filter is an error line; a task's view draws its waterfall with its payload and result (a
 * running task's payload from its live view); a parent lists its child; Cancel turns the running
 * task cancelled, on its view and live on an open list; Replay brings the dead-lettered one back to run again. Tenant globex's caller sees
 * none of it and no buttons; an operator picks acme's by the tenant filter. Leaves
 * test/artifacts/console-tasks.png (a task) and console-tasks-list.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { NonRetryableError, type ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { openBrowser, type Browser } from '../support/browser.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = `admin-console-tasks-${'t'.repeat(40)}`;

let stack: Stack;
let browser: Browser;
let page: Page;
const agents: ReachAgent[] = [];
const key: Record<string, string> = { admin: ADMIN };
/** The flaky capability fails (dead-lettered at once) until the test lets it succeed. */
let flakyFails = true;
/**
 * Searches start here (epoch ms): the archive in InfluxDB is shared with the other files of the
 * run, whose tenants may be called acme too.
 */
let since = '';

const handler = async (task: TaskContext): Promise<unknown> => {
  switch (task.capability) {
    case 'hold':
      // Runs until cancelled: the agent is told to stop, and its signal aborts.
      await new Promise((resolve) => task.signal.addEventListener('abort', resolve));
      return null;
    case 'flaky':
      if (flakyFails) throw new NonRetryableError('model not loaded', { code: 'MODEL_NOT_LOADED' });
      return { ok: true };
    case 'plan':
      await task
        .submit({ task_id: 'plan-child', capability: 'translate', payload: 'salut' })
        .result();
      return { planned: 1 };
    case 'translate':
      return { text: 'hello' };
    default:
      return { echoed: task.payload };
  }
};

const as = (who: string) => ({ authorization: `Bearer ${key[who]}` });

async function makeKey(body: Record<string, unknown>): Promise<string> {
  const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body,
    headers: as('admin'),
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

async function submit(taskId: string, capability: string, payload: unknown): Promise<void> {
  const res = await http(`${stack.routerUrl}/v1/tasks`, {
    body: { task_id: taskId, capability, payload },
    headers: as('acme'),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
}

/** The task's status as acme's caller reads it, once `ok` holds. */
const statusOf = (taskId: string, ok: (view: { status: string; archived?: boolean }) => boolean) =>
  waitFor(
    async () => {
      const r = await http<{ status: string; archived?: boolean }>(
        `${stack.routerUrl}/v1/tasks/${taskId}`,
        { headers: as('acme') },
      );
      return r.status === 200 && ok(r.body) ? r.body : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 100, message: `task ${taskId} never got there` },
  );

/** Logs the page in as `who`, logging out first when it is logged in. */
async function logIn(who: string): Promise<void> {
  if ((await page.locator('#logout').count()) > 0) {
    await page.click('#logout');
    await page.locator('#login-form').waitFor({ timeout: 10_000 });
  }
  await page.goto(`${stack.routerUrl}/console`);
  await page.locator('#login-form').waitFor({ timeout: 10_000 });
  await page.fill('#login-key', key[who]!);
  await page.click('#login-form button');
  await page.locator('#tenant').waitFor({ timeout: 10_000 });
}

const row = (id: string) => page.locator(`#tasks tr[data-task-id="${id}"]`);
/** The task ids the list shows, sorted. */
async function listed(): Promise<string[]> {
  const ids: string[] = [];
  for (const r of await page.locator('#tasks tbody tr[data-task-id]').all())
    ids.push((await r.getAttribute('data-task-id')) ?? '');
  return ids.sort();
}

beforeAll(async () => {
  since = String(Date.now());
  stack = await startStack({
    influx: 'v1',
    env: {
      REACH_AUTH: 'required',
      REACH_ADMIN_KEY: ADMIN,
      REACH_TASK_RETENTION_S: '2',
      REACH_ARCHIVE_MS: '200',
    },
  });
  key.acme = await makeKey({ tenant: 'acme', role: 'caller' });
  key.globex = await makeKey({ tenant: 'globex', role: 'caller' });
  const agentKey = await makeKey({ tenant: 'acme', role: 'agent' });
  // A child runs on another agent than its parent (one agent twice in a chain is a loop).
  agents.push(
    await startAgent(stack, 'tasks-a', ['echo', 'hold', 'flaky', 'plan'], handler, {
      apiKey: agentKey,
    }),
    await startAgent(stack, 'tasks-b', ['translate'], handler, { apiKey: agentKey }),
  );
  await Promise.all([
    submit('echo-0', 'echo', { n: 0 }),
    submit('echo-1', 'echo', { n: 1 }),
    submit('translate-0', 'translate', { text: 'bonjour' }),
    submit('plan-0', 'plan', { steps: 1 }),
    submit('held', 'hold', { minutes: 5 }),
    submit('doomed', 'flaky', {}),
  ]);
  await Promise.all([
    statusOf('held', (v) => v.status === 'received'),
    statusOf('doomed', (v) => v.status === 'dead'),
    statusOf('plan-0', (v) => v.status === 'completed' || v.archived === true),
  ]);
  browser = await openBrowser();
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

describe('the console’s tasks page', () => {
  it('lists, filters, shows a task and cancels and replays from the page', async () => {
    await logIn('acme');
    // Finished tasks left Redis after 2 s: a search reaching back asks the archive too.
    await page.goto(`${stack.routerUrl}/console/tasks?since=${since}`);
    await row('doomed').waitFor({ timeout: 10_000 });
    await expect
      .poll(listed)
      .toEqual(
        ['doomed', 'echo-0', 'echo-1', 'held', 'plan-0', 'plan-child', 'translate-0'].sort(),
      );
    expect(await row('held').getAttribute('data-status')).toBe('received');
    expect(await row('doomed').getAttribute('data-status')).toBe('dead');
    expect(await row('doomed').innerText()).toMatch(/MODEL_NOT_LOADED/);
    expect(await row('plan-child').locator('td').nth(8).innerText()).toBe('plan-0');
    await browser.screenshot('console-tasks-list');
    // A caller searches its own tenant only: no tenant filter.
    expect(await page.locator('#filter-tenant').count()).toBe(0);

    // A capability filter narrows the list, is in the URL and survives a reload.
    await page.fill('#filter-capability', 'translate');
    await page.click('#filter-search');
    await expect.poll(listed).toEqual(['plan-child', 'translate-0']);
    expect(new URL(page.url()).searchParams.get('capability')).toBe('translate');
    await page.reload();
    await row('translate-0').waitFor({ timeout: 10_000 });
    expect(await listed()).toEqual(['plan-child', 'translate-0']);
    expect(await page.inputValue('#filter-capability')).toBe('translate');
    // A filter the API refuses is an error line.
    await page.fill('#filter-since', 'yesterday');
    await page.click('#filter-search');
    await expect.poll(() => page.locator('#tasks-error').innerText()).toMatch(/INVALID_QUERY/);

    // A finished task's view, read back from the archive: waterfall, payload and result.
    await statusOf('echo-0', (v) => v.archived === true);
    await page.goto(`${stack.routerUrl}/console/tasks?since=${since}&capability=echo`);
    await row('echo-0').locator('a').first().click();
    await page.waitForURL(/\/console\/tasks\/echo-0$/);
    const chart = page.locator('#task-timeline');
    await chart.locator('svg').waitFor({ timeout: 10_000 });
    expect(await chart.getAttribute('data-stages')).toBe('accepted sent received completed');
    expect(await chart.locator('rect.bar').count()).toBe(3);
    expect(JSON.parse(await page.locator('#task-payload-json').innerText())).toEqual({ n: 0 });
    expect(JSON.parse(await page.locator('#task-result-json').innerText())).toEqual({
      echoed: { n: 0 },
    });
    expect(await page.locator('#task-facts').innerText()).toMatch(/completed[\s\S]*echo/);
    expect(await page.locator('button[data-action]').count()).toBe(0);

    // A parent lists its child, which links back.
    await page.goto(`${stack.routerUrl}/console/tasks/plan-0`);
    const child = page.locator('#task-children li[data-task-id="plan-child"]');
    await child.waitFor({ timeout: 10_000 });
    expect(await child.innerText()).toMatch(/completed[\s\S]*translate/);
    await browser.screenshot('console-tasks');
    await child.locator('a').first().click();
    await page.locator('#task-parent').waitFor({ timeout: 10_000 });
    expect(await page.locator('#task-parent').innerText()).toBe('plan-0');

    // Cancel on the running task: cancelled on its view, and live on a list left open.
    const watcher = await browser.context.newPage();
    await watcher.goto(`${stack.routerUrl}/console/tasks?since=${since}&capability=hold`);
    const watched = watcher.locator('#tasks tr[data-task-id="held"]');
    await watched.waitFor({ timeout: 10_000 });
    expect(await watched.getAttribute('data-status')).toBe('received');
    await page.goto(`${stack.routerUrl}/console/tasks/held`);
    await page.locator('#task-facts[data-status="received"]').waitFor({ timeout: 10_000 });
    // A running task's payload comes from its live view (`?include=payload`).
    expect(JSON.parse(await page.locator('#task-payload-json').innerText())).toEqual({
      minutes: 5,
    });
    expect(await page.locator('button[data-action="replay"]').count()).toBe(0);
    await page.click('button[data-action="cancel"]');
    await page.locator('#task-facts[data-status="cancelled"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#task-message').innerText()).toMatch(/Cancelled/);
    expect(await page.locator('button[data-action="cancel"]').count()).toBe(0);
    await expect
      .poll(() => watched.getAttribute('data-status'), { timeout: 6000 })
      .toBe('cancelled');
    await watcher.close();

    // Replay on the dead-lettered task: it runs again, and completes now that it can.
    flakyFails = false;
    await page.goto(`${stack.routerUrl}/console/tasks/doomed`);
    await page.locator('#task-facts[data-status="dead"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#task-error').innerText()).toMatch(/model not loaded/);
    expect(await page.locator('button[data-action="cancel"]').count()).toBe(0);
    await page.click('button[data-action="replay"]');
    await expect
      .poll(() => page.locator('#task-message').innerText())
      .toMatch(/Replayed: attempt 2/);
    await page.locator('#task-facts[data-status="completed"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('button[data-action]').count()).toBe(0);
    expect(browser.problems).toEqual([]);
  }, 60_000);

  it('shows another tenant’s caller none of those tasks and no buttons', async () => {
    await logIn('globex');
    await page.goto(`${stack.routerUrl}/console/tasks?since=${since}`);
    await page.locator('#tasks tr.empty').filter({ hasText: 'No task matches' }).waitFor();
    expect(await listed()).toEqual([]);
    await page.goto(`${stack.routerUrl}/console/tasks/held`);
    await expect.poll(() => page.locator('#task-message').innerText()).toMatch(/TASK_NOT_FOUND/);
    expect(await page.locator('button[data-action]').count()).toBe(0);
    // Another tenant's tasks are the operators' to search: refused on the page.
    await page.goto(`${stack.routerUrl}/console/tasks?tenant=acme`);
    await expect.poll(() => page.locator('#tasks-error').innerText()).toMatch(/FORBIDDEN/);
    expect(browser.problems).toEqual([]);
  });

  it('shows an operator any tenant’s tasks, named <tenant>/<id>', async () => {
    await logIn('admin');
    await page.goto(
      `${stack.routerUrl}/console/tasks?since=${since}&tenant=acme&capability=translate`,
    );
    await row('acme/translate-0').waitFor({ timeout: 10_000 });
    expect(await listed()).toEqual(['acme/plan-child', 'acme/translate-0']);
    expect(await page.inputValue('#filter-tenant')).toBe('acme');
    expect(await row('acme/translate-0').locator('td').nth(4).innerText()).toBe('acme');
    await row('acme/translate-0').locator('a').first().click();
    await page.locator('#task-facts[data-status="completed"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#task-facts').innerText()).toMatch(/tenant\s+acme/);
    expect(browser.problems).toEqual([]);
  });
});
