/**
 * The operators' console in a real browser (Debian's Chromium, driven by playwright-core): the
 * agent table shows registered agents, an agent that registers after the page loaded appears in
 * the live event stream, a task lookup draws its timeline, the latency chart has points. Leaves
 * a screenshot at test/artifacts/console.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openBrowser, type Browser } from '../support/browser.ts';
import { RawWorker, submitAndComplete } from '../support/raw-worker.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let workers: RawWorker[] = [];
let browser: Browser;
let page: Page;
const taskIds: string[] = [];

beforeAll(async () => {
  stack = await startStack({ influx: 'v1', env: { REACH_PROBE_MS: '500' } });
  workers = await Promise.all([
    RawWorker.start(
      stack,
      {
        agent_id: 'console-a',
        instance_id: 'console-a-1',
        capabilities: ['echo', 'translate'],
        max_concurrency: 4,
        region: 'eu-west',
      },
      {
        runtime: { loop_lag_p99_ms: 12, gc_share: 0.02, rss_bytes: 150 * 1048576 },
        probeHealth: {
          ok: true,
          dependencies: { 'model-gateway': { ok: true, latency_ms: 4 }, cache: { ok: false } },
        },
      },
    ),
    RawWorker.start(stack, {
      agent_id: 'console-b',
      instance_id: 'console-b-1',
      capabilities: ['echo'],
      max_concurrency: 2,
      region: 'us-east',
    }),
  ]);
  for (let i = 0; i < 6; i++)
    taskIds.push(await submitAndComplete(stack, { capability: 'echo', payload: { n: i } }));
  taskIds.push(
    await submitAndComplete(stack, { capability: 'translate', payload: { text: 'bonjour' } }),
  );

  browser = await openBrowser();
  page = browser.page;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(workers.map((w) => w.stop()));
  await stack?.stop();
});

describe('the console', () => {
  it('shows agents, live events, a task timeline and latencies, and leaves a screenshot', async () => {
    await page.goto(`${stack.routerUrl}/console`);

    // The agent table lists both agents, HEALTHY, with their capabilities and region.
    const rowA = page.locator('#agents tr[data-agent-id="console-a"]');
    await rowA.waitFor({ timeout: 10_000 });
    await expect.poll(() => rowA.getAttribute('data-status')).toBe('HEALTHY');
    expect(await rowA.innerText()).toMatch(/eu-west/);
    // Each agent links to its own page; the bar links every page, the overview marked current.
    expect(await rowA.locator('td').first().locator('a').getAttribute('href')).toBe(
      '/console/agents/console-a',
    );
    expect(await page.locator('#nav a').allInnerTexts()).toEqual([
      'Overview',
      'Tasks',
      'Agents',
      'Capabilities',
      'Dead letters',
      'Schedules',
      'Tenants & keys',
    ]);
    expect(await page.locator('#nav a[aria-current="page"]').innerText()).toBe('Overview');
    expect(await rowA.locator('td').nth(6).locator('.chip').allInnerTexts()).toEqual([
      'echo',
      'translate',
    ]);
    const rowB = page.locator('#agents tr[data-agent-id="console-b"]');
    expect(await rowB.locator('td').nth(3).innerText()).toMatch(/\d+ \/ 2/);
    // Health score from outcomes: nothing failed.
    expect(await rowA.locator('td').nth(2).innerText()).toBe('100');
    // Recent success: every task completed, and no failure to group by code.
    await expect
      .poll(() => rowA.locator('td').nth(7).innerText(), { timeout: 10_000 })
      .toMatch(/100 %/);
    expect(await rowA.locator('td').nth(8).innerText()).toBe('–');
    // The dependencies its last probe reported, the one down first and warned; its runtime.
    await expect
      .poll(() => rowA.locator('td').nth(9).locator('[data-dependency]').allInnerTexts(), {
        timeout: 10_000,
      })
      .toEqual(['cache down', 'model-gateway ok 4 ms']);
    expect(await rowA.locator('[data-dependency="cache"]').getAttribute('class')).toBe('chip warn');
    await expect
      .poll(() => rowA.locator('[data-runtime]').innerText(), { timeout: 10_000 })
      .toBe('loop 12 ms · gc 2 % · 150 MB');
    expect(await rowB.locator('td').nth(9).innerText()).toBe('–');

    // The event stream is live; an agent that registers now shows up in it and in the table.
    await page.locator('#conn[data-state="live"]').waitFor({ timeout: 10_000 });
    const late = await RawWorker.start(stack, {
      agent_id: 'console-late',
      instance_id: 'late-1',
      capabilities: ['echo'],
      max_concurrency: 1,
      region: 'ap-south',
    });
    workers.push(late);
    const event = page.locator('#events li[data-kind="registered"][data-agent-id="console-late"]');
    await event.waitFor({ timeout: 10_000 });
    expect(await event.innerText()).toMatch(/console-late registered/);
    await page.locator('#agents tr[data-agent-id="console-late"]').waitFor({ timeout: 10_000 });

    // Task lookup draws the timeline: three steps between four stages.
    const taskId = taskIds[0]!;
    await page.fill('#task-id', taskId);
    await page.click('#task-form button');
    const timeline = page.locator('#task-timeline[data-stages="accepted sent received completed"]');
    await timeline.waitFor({ timeout: 10_000 });
    expect(await timeline.locator('rect.bar').count()).toBe(3);
    expect(await page.locator('#task-result dl').innerText()).toMatch(/completed[\s\S]*echo/);
    expect(await page.locator('#task-page').getAttribute('href')).toBe(
      `/console/tasks/${encodeURIComponent(taskId)}`,
    );

    // The latency chart has a point per task this router sent.
    await expect
      .poll(() => page.locator('#latency circle.dot[data-task-id]').count(), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(taskIds.length);

    // The figures table answers from InfluxDB once the events are written.
    await page.locator('#figures tr[data-capability="echo"]').waitFor({ timeout: 20_000 });

    // A task that finds no agent, with a deadline, waits in the room: the console shows it.
    const queued = await http<{ status: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'console-wait', payload: 1, timeout_s: 60 },
    });
    expect(queued.body.status).toBe('queued');
    const room = page.locator('#rooms tr[data-capability="console-wait"][data-tenant="default"]');
    await room.waitFor({ timeout: 10_000 });
    expect(await room.locator('td').nth(2).innerText()).toBe('1');

    await browser.screenshot('console');
    expect(browser.problems).toEqual([]);
  }, 90_000);
});
