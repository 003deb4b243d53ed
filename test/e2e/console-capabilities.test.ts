/**
 * The console's capabilities page in a real browser (Debian's Chromium, driven by
 * playwright-core), keys required, InfluxDB v1: the list shows each capability with its agents
 * and waiting room, the text and "waiting only" filters narrow it and live in the URL (a reload
 * keeps them); a capability's page draws its throughput and execution-time charts from
 * GET /v1/stats/series once the events are in InfluxDB, lists its agents and its waiting room,
 * and its window selector changes the URL and redraws. A caller key of another tenant sees none
 * of these figures. Leaves a screenshot at test/artifacts/console-capabilities.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { NonRetryableError, ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { openBrowser, type Browser } from '../support/browser.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = `admin-capabilities-${'k'.repeat(40)}`;
const ALPHA = 'cap-alpha';
const BETA = 'cap-beta';
const WAIT = 'cap-wait';
/**
 * The other tenant, named for this run: InfluxDB is shared by every file of a run, and others
 * write figures for tenants called acme or globex.
 */
const OTHER = `cap-other-${Date.now().toString(36)}`;

let stack: Stack;
let browser: Browser;
let page: Page;
let otherKey = '';
const agents: ReachAgent[] = [];

const admin = { authorization: `Bearer ${ADMIN}` };

async function startAgent(agentId: string, capabilities: string[]): Promise<void> {
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId,
    capabilities,
    maxConcurrency: 4,
    apiKey: ADMIN,
    handler: async (task: TaskContext) => {
      if ((task.payload as { fail?: boolean }).fail) throw new NonRetryableError('asked to fail');
      return { ok: true };
    },
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agents.push(agent);
  agent.start();
  await agent.ready();
}

/** Submits a task as the operator and waits for its end; resolves with its status. */
async function run(capability: string, payload: unknown): Promise<string> {
  const res = await http<{ status: string }>(`${stack.routerUrl}/v1/tasks?wait_ms=10000`, {
    body: { capability, payload },
    headers: admin,
  });
  return res.body.status;
}

async function logIn(key: string): Promise<void> {
  await page.locator('#login-form').waitFor({ timeout: 10_000 });
  await page.fill('#login-key', key);
  await page.click('#login-form button');
  await page.locator('#tenant').waitFor({ timeout: 10_000 });
}

beforeAll(async () => {
  stack = await startStack({
    influx: 'v1',
    env: { ...FAST_LEASES, REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN },
  });
  const made = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body: { tenant: OTHER, role: 'caller', label: 'capabilities test' },
    headers: admin,
  });
  expect(made.status).toBe(201);
  otherKey = made.body.key;
  await Promise.all([
    startAgent('cap-agent-1', [ALPHA, BETA]),
    startAgent('cap-agent-2', [ALPHA]),
    (async () => (browser = await openBrowser()))(),
  ]);
  page = browser.page;
  // alpha: four completed, one failed for good (a failed attempt and a dead letter); beta: two.
  const ends = await Promise.all([
    ...[1, 2, 3, 4].map((n) => run(ALPHA, { n })),
    run(ALPHA, { fail: true }),
    run(BETA, { n: 1 }),
    run(BETA, { n: 2 }),
  ]);
  expect(ends.sort()).toEqual([...Array(6).fill('completed'), 'dead'].sort());
  // A task no agent serves, with a deadline, waits in the room.
  const queued = await http<{ status: string }>(`${stack.routerUrl}/v1/tasks`, {
    body: { capability: WAIT, payload: 1, timeout_s: 60 },
    headers: admin,
  });
  expect(queued.body.status).toBe('queued');
  // The events reach InfluxDB within the sinks' flush (1 s).
  await waitFor(
    async () => {
      type Point = { completed: number; failed: number; dead: number };
      const res = await http<{ points: Point[] }>(
        `${stack.routerUrl}/v1/stats/series?capability=${ALPHA}&window=15m`,
        { headers: admin },
      );
      const sum = (k: keyof Point) => (res.body.points ?? []).reduce((n, p) => n + p[k], 0);
      return sum('completed') === 4 && sum('failed') === 1 && sum('dead') === 1;
    },
    { timeoutMs: 15_000, intervalMs: 250, message: 'the events did not reach InfluxDB' },
  );
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

const row = (capability: string) =>
  page.locator(`#capabilities tr[data-capability="${capability}"]`);
/** The capabilities listed, by their first cell (the link to their page). */
const listed = () =>
  page.locator('#capabilities tr[data-capability] td:first-child').allInnerTexts();

describe('the capabilities page', () => {
  it('lists, filters, charts a capability over a chosen window, and scopes a caller', async () => {
    await page.goto(`${stack.routerUrl}/console/capabilities`);
    await logIn(ADMIN);

    // Every capability with its agents (HEALTHY / all), the one nobody serves with its room.
    await expect
      .poll(() => row(ALPHA).locator('td[data-col="agents"]').innerText(), { timeout: 10_000 })
      .toBe('2 / 2');
    expect(await row(BETA).locator('td[data-col="agents"]').innerText()).toBe('1 / 1');
    expect(await row(WAIT).locator('td[data-col="agents"]').innerText()).toBe('none');
    expect(await row(WAIT).locator('td[data-col="queued"]').innerText()).toBe('1');
    expect(await row(ALPHA).locator('td[data-col="failed"]').innerText()).toBe('1 (1 dead)');
    await row(ALPHA).locator('td[data-col="trend"] svg.spark').waitFor({ timeout: 10_000 });
    await browser.screenshot('console-capabilities-list');

    // The text filter narrows the list and stays in the URL across a reload; so does "waiting".
    await page.fill('#cap-filter', 'beta');
    await expect.poll(listed).toEqual([BETA]);
    expect(new URL(page.url()).searchParams.get('q')).toBe('beta');
    await page.reload();
    await expect.poll(listed, { timeout: 10_000 }).toEqual([BETA]);
    expect(await page.inputValue('#cap-filter')).toBe('beta');
    await page.fill('#cap-filter', '');
    await page.check('#cap-waiting');
    await expect.poll(listed).toEqual([WAIT]);
    expect(page.url()).toMatch(/\?waiting=1$/);

    // A capability's page: its figures, both charts with marks, and its agents linked.
    await row(WAIT).locator('a').click();
    await page.waitForURL(`**/console/capabilities/${WAIT}`);
    const room = page.locator('#cap-room tr[data-tenant="default"]');
    await room.waitFor({ timeout: 10_000 });
    expect(await room.locator('td[data-col="queued"]').innerText()).toBe('1');
    expect(await page.locator('[data-fact="queued"] b').innerText()).toBe('1');

    await page.goto(`${stack.routerUrl}/console/capabilities/${ALPHA}?window=15m`);
    const throughput = page.locator('#chart-throughput[data-window="15m"][data-step="15s"]');
    await throughput.waitFor({ timeout: 10_000 });
    expect(await throughput.getAttribute('data-points')).toBe('60');
    const bars = (series: string) =>
      page.locator(`#chart-throughput rect.mark[data-series="${series}"]`);
    // Each bar's title ends in its count: "17:51:15 · completed: 3".
    const barTotal = async (series: string) =>
      (await bars(series).allTextContents()).reduce(
        (n, title) => n + Number(/: (\d+)$/.exec(title)?.[1] ?? NaN),
        0,
      );
    expect(await barTotal('completed')).toBe(4);
    expect(await barTotal('failed')).toBe(1);
    expect(await bars('dead').count()).toBeGreaterThanOrEqual(1);
    const dots = page.locator('#chart-latency circle.mark');
    expect(await dots.count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('#chart-latency circle.mark[data-series="p95"]').count()).toBe(
      await page.locator('#chart-latency circle.mark[data-series="mean"]').count(),
    );
    expect(await page.locator('[data-fact="completed"] b').innerText()).toBe('4');
    expect(await page.locator('[data-fact="agents"] b').innerText()).toBe('2 / 2');
    const links = page.locator('#cap-agents a');
    expect(await links.allInnerTexts()).toEqual(['cap-agent-1', 'cap-agent-2']);
    expect(await links.nth(1).getAttribute('href')).toBe('/console/agents/cap-agent-2');
    expect(await page.locator('button[data-window="15m"]').getAttribute('aria-pressed')).toBe(
      'true',
    );

    // The window selector: the URL holds the choice and the charts are drawn again at its step.
    await page.click('button[data-window="1h"]');
    await page
      .locator('#chart-throughput[data-window="1h"][data-step="1m"]')
      .waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).searchParams.get('window')).toBe('1h');
    expect(await page.locator('#chart-throughput').getAttribute('data-points')).toBe('60');
    expect(await barTotal('completed')).toBe(4);
    expect(
      await page.locator('#chart-latency[data-window="1h"] circle.mark').count(),
    ).toBeGreaterThan(0);
    await browser.screenshot('console-capabilities');
    expect(browser.problems).toEqual([]);

    // A caller key of another tenant: no capability of the first, and its charts are empty.
    await page.click('#logout');
    await logIn(otherKey);
    await page.goto(`${stack.routerUrl}/console/capabilities`);
    await expect
      .poll(() => page.locator('#cap-note').innerText(), { timeout: 10_000 })
      .toMatch(/^0 of 0 capabilities/);
    expect(await listed()).toEqual([]);
    await page.goto(`${stack.routerUrl}/console/capabilities/${ALPHA}?window=15m`);
    await page.locator('#chart-throughput[data-points="60"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#chart-throughput rect.mark').count()).toBe(0);
    expect(await page.locator('#chart-latency circle.mark').count()).toBe(0);
    expect(await page.locator('[data-fact="agents"] b').innerText()).toBe('0 / 0');
    expect(await page.locator('#cap-agents').innerText()).toMatch(/No agent/);
    expect(browser.problems).toEqual([]);
  }, 60_000);
});
