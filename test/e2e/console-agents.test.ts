/**
 * The console's agents page in a real browser (Debian's Chromium, driven by playwright-core)
 * against a router that requires keys, with agents of two tenants (two of them observing): an
 * operator sees every agent with status, mode, load, region, tags and runtime, and an agent's
 * recent failures by error_code; a capability
 * filter narrows the list and survives a reload, region and free text from the URL narrow it
 * too; Promote turns an observing agent serving (with a weight) and Drain turns one DRAINING,
 * both through the router's forwarding to registry-sync, and the agent view's health history
 * shows the fleet events. A caller of tenant acme sees acme's agents only, and no Drain or
 * Promote. Leaves screenshots at test/artifacts/console-agents.png and console-agent.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { NonRetryableError, ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { openBrowser, type Browser } from '../support/browser.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = `admin-console-agents-${'g'.repeat(40)}`;

let stack: Stack;
let browser: Browser;
let page: Page;
let callerKey = '';
const beats: NodeJS.Timeout[] = [];
/** acme-echo runs the SDK: it fails the tasks that ask it to, with an error code. */
let echoAgent: ReachAgent;

/** The agents played with raw HTTP, by tenant: two observe (get probes only) until promoted. */
const AGENTS = [
  { agent_id: 'acme-translate', tenant: 'acme', capabilities: ['translate'], region: 'us-east' },
  {
    agent_id: 'acme-observer',
    tenant: 'acme',
    capabilities: ['echo'],
    region: 'eu-west',
    observe: true,
  },
  {
    agent_id: 'acme-watcher',
    tenant: 'acme',
    capabilities: ['echo'],
    region: 'us-east',
    observe: true,
  },
  { agent_id: 'globex-echo', tenant: 'globex', capabilities: ['echo'], region: 'eu-west' },
];

const asAdmin = { authorization: `Bearer ${ADMIN}` };

async function newKey(tenant: string, role: string): Promise<string> {
  const made = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body: { tenant, role, label: `console agents ${role}` },
    headers: asAdmin,
  });
  expect(made.status).toBe(201);
  return made.body.key;
}

/** Registers an agent with its tenant's agent key and heartbeats it (with runtime figures). */
async function startAgent(a: (typeof AGENTS)[number], agentKey: string): Promise<void> {
  const { tenant: _tenant, ...body } = a;
  const reg = await http<{ token: string }>(`${stack.registryUrl}/v1/agents/register`, {
    body: { ...body, max_concurrency: 4 },
    headers: { authorization: `Bearer ${agentKey}` },
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(200);
  const beat = () =>
    http(`${stack.registryUrl}/v1/agents/${a.agent_id}/heartbeat`, {
      body: { inflight: 0, runtime: { loop_lag_p99_ms: 12, gc_share: 0.02, rss_bytes: 96 << 20 } },
      headers: { authorization: `Bearer ${reg.body.token}` },
    }).catch(() => undefined);
  await beat();
  beats.push(setInterval(() => void beat(), 500));
}

type AgentView = { agent_id: string; status: string; observe: boolean; weight: number };

const registryAgent = (id: string) =>
  http<AgentView>(`${stack.registryUrl}/v1/agents/${id}`, { headers: asAdmin });

/** Logs the browser in with `apiKey` (the login form itself is console-login.test.ts's). */
async function logIn(apiKey: string): Promise<void> {
  await browser.context.clearCookies();
  const res = await page.request.post(`${stack.routerUrl}/v1/console/login`, {
    data: { key: apiKey },
  });
  expect(res.status()).toBe(200);
}

/** The agent ids the list shows, sorted. */
async function listed(): Promise<string[]> {
  const rows = page.locator('#agents-list tbody tr[data-agent-id]');
  const ids: string[] = [];
  for (let i = 0, n = await rows.count(); i < n; i++)
    ids.push((await rows.nth(i).getAttribute('data-agent-id')) ?? '');
  return ids.sort();
}

/** Opens the list at `query` and waits for it to have rendered. */
async function openList(query = ''): Promise<void> {
  await page.goto(`${stack.routerUrl}/console/agents${query}`);
  await page.locator('#agents-card-note:text-matches("shown")').waitFor({ timeout: 10_000 });
}

beforeAll(async () => {
  stack = await startStack({
    // No probes while the test runs: the raw agents here never read their inbox.
    env: { REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN, REACH_PROBE_MS: '600000' },
  });
  const agentKeys: Record<string, string> = {
    acme: await newKey('acme', 'agent'),
    globex: await newKey('globex', 'agent'),
  };
  callerKey = await newKey('acme', 'caller');
  echoAgent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    apiKey: agentKeys['acme'],
    agentId: 'acme-echo',
    capabilities: ['echo'],
    region: 'eu-west',
    tags: ['gpu'],
    maxConcurrency: 4,
    handler: async (task: TaskContext) => {
      if ((task.payload as { fail?: boolean }).fail)
        throw new NonRetryableError('asked to fail', { code: 'BAD_INPUT' });
      return { ok: true };
    },
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  echoAgent.start();
  await echoAgent.ready();
  for (const a of AGENTS) await startAgent(a, agentKeys[a.tenant] ?? '');
  await waitFor(
    async () => {
      const res = await http<{ agents: AgentView[] }>(`${stack.registryUrl}/v1/agents`, {
        headers: asAdmin,
      });
      return res.body.agents.filter((a) => a.status === 'HEALTHY').length === AGENTS.length + 1;
    },
    { timeoutMs: 10_000, message: 'agents did not turn HEALTHY' },
  );
  // Two of acme's tasks fail on acme-echo with an error code, one completes.
  for (const fail of [true, true, false]) {
    const sub = await http(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'echo', payload: { fail } },
      headers: { authorization: `Bearer ${callerKey}` },
    });
    expect(sub.status).toBe(202);
  }
  await waitFor(
    async () => {
      const res = await http<{ agents: { agent_id: string; recent: { failed: number } }[] }>(
        `${stack.routerUrl}/v1/console/agents`,
        { headers: asAdmin },
      );
      return res.body.agents.find((a) => a.agent_id === 'acme-echo')?.recent.failed === 2;
    },
    { timeoutMs: 10_000, message: 'the failures did not reach the console' },
  );
  browser = await openBrowser();
  page = browser.page;
}, 60_000);

afterAll(async () => {
  for (const t of beats) clearInterval(t);
  await echoAgent?.close();
  await browser?.close();
  await stack?.stop();
});

describe('the agents page', () => {
  it('lists every agent for an operator; filters narrow it and stay in the URL', async () => {
    await logIn(ADMIN);
    await openList();
    expect(await listed()).toEqual(['acme-echo', ...AGENTS.map((a) => a.agent_id)].sort());
    const observer = page.locator('tr[data-agent-id="acme-observer"]');
    expect(await observer.locator('[data-mode]').getAttribute('data-mode')).toBe('observing');
    expect(await observer.getAttribute('data-status')).toBe('HEALTHY');
    const echo = page.locator('tr[data-agent-id="acme-echo"]');
    expect(await echo.locator('[data-kind="tag"]').innerText()).toBe('gpu');
    expect(await observer.locator('[data-runtime]').innerText()).toMatch(/loop 12 ms · gc 2 %/);
    expect(await observer.innerText()).toMatch(/0 \/ 4/);

    await page.selectOption('#agents-filters-capability', 'translate');
    await expect.poll(listed, { timeout: 5000 }).toEqual(['acme-translate']);
    expect(new URL(page.url()).searchParams.get('capability')).toBe('translate');
    await page.reload();
    await page.locator('#agents-card-note:text-matches("shown")').waitFor({ timeout: 10_000 });
    expect(await listed()).toEqual(['acme-translate']);
    expect(await page.inputValue('#agents-filters-capability')).toBe('translate');

    await openList('?region=eu-west&q=ACME');
    expect(await listed()).toEqual(['acme-echo', 'acme-observer']);
    await page.fill('#agents-filters-q', 'observer');
    await page.click('#agents-filters button[type="submit"]');
    await expect.poll(listed, { timeout: 5000 }).toEqual(['acme-observer']);
    expect(page.url()).toContain('q=observer');
    await openList('?status=DRAINING');
    expect(await listed()).toEqual([]);
    await openList();
    await browser.screenshot('console-agents');
  });

  it('shows an agent’s recent failures grouped by error_code', async () => {
    await page.click('tr[data-agent-id="acme-echo"] a');
    const failures = page.locator('#agent-failures-table tr[data-code="BAD_INPUT"]');
    await failures.waitFor({ timeout: 10_000 });
    expect(await failures.innerText()).toMatch(/BAD_INPUT\s+2/);
    expect(await page.innerText('#agent-failures')).toMatch(/1 completed, 2 failed/);
    await openList();
  });

  it('promotes an observing agent to serving with a weight, and shows its history', async () => {
    await page.click('tr[data-agent-id="acme-observer"] a');
    await page.locator('#agent-mode [data-mode="observing"]').waitFor({ timeout: 10_000 });
    // The registration is among the fleet events the view reads back.
    await page.locator('#agent-history li[data-kind="registered"]').waitFor({ timeout: 10_000 });
    await page.fill('#agent-weight-input', '2');
    await page.click('button[data-action="promote"]');
    await page.locator('#agent-mode [data-mode="serving"]').waitFor({ timeout: 10_000 });
    expect(await page.innerText('#agent-weight')).toBe('2');
    expect(await page.locator('button[data-action="promote"]').count()).toBe(0);
    const view = await registryAgent('acme-observer');
    expect(view.body).toMatchObject({ observe: false, weight: 2 });
    // The promotion arrives as a live fleet event.
    await page
      .locator('#agent-history li[data-kind="status"]', { hasText: 'promoted' })
      .waitFor({ timeout: 10_000 });
    await browser.screenshot('console-agent');
  });

  it('drains an agent once confirmed: it turns DRAINING', async () => {
    await page.goto(`${stack.routerUrl}/console/agents/acme-translate`);
    await page.locator('#agent-status [data-status="HEALTHY"]').waitFor({ timeout: 10_000 });
    await page.click('button[data-action="drain"]');
    // Nothing happens before the confirmation.
    expect((await registryAgent('acme-translate')).body.status).toBe('HEALTHY');
    await page.click('button[data-action="confirm-drain"]');
    await page.locator('#agent-status [data-status="DRAINING"]').waitFor({ timeout: 10_000 });
    expect(await page.innerText('#agent-action-status')).toMatch(/draining/);
    expect(await page.locator('button[data-action="drain"]').count()).toBe(0);
    // Idle, it is removed at the next sweep: DRAINING until then.
    const after = await registryAgent('acme-translate');
    if (after.status === 200) expect(after.body.status).toBe('DRAINING');
    else expect(after.status).toBe(404);
    await page.locator('#agent-history li[data-kind="deregistered"]').waitFor({ timeout: 10_000 });
    expect(browser.problems).toEqual([]);
  });

  it('shows a caller its tenant’s agents only, and no Drain or Promote', async () => {
    await logIn(callerKey);
    await openList();
    const ids = await listed();
    expect(ids).toContain('acme-watcher');
    expect(ids).toContain('acme-echo');
    expect(ids.every((id) => id.startsWith('acme-'))).toBe(true);

    await page.goto(`${stack.routerUrl}/console/agents/acme-watcher`);
    await page.locator('#agent-mode [data-mode="observing"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('button[data-action="drain"]').count()).toBe(0);
    expect(await page.locator('button[data-action="promote"]').count()).toBe(0);
    // The API refuses the caller's session too.
    const refused = await page.request.post(`${stack.routerUrl}/v1/agents/acme-watcher/drain`, {
      headers: { 'x-reach-console': '1' },
    });
    expect(refused.status()).toBe(403);

    await page.goto(`${stack.routerUrl}/console/agents/globex-echo`);
    await page.locator('#agent-error').waitFor({ timeout: 10_000 });
    expect(await page.getAttribute('#agent-error', 'data-error')).toBe('AGENT_NOT_FOUND');
    expect(browser.problems).toEqual([]);
  });
});
