/**
 * `npm run docs:screenshots`: one screenshot of each console page, into docs/console/, against a
 * stack with demo data — three agents (one observing), completed, failed, running, waiting and
 * dead-lettered tasks of two tenants, a parent with children, schedules and keys. Not part of
 * `npm test`: it writes tracked files. Run it after a change to the console's pages.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { NonRetryableError, ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { openBrowser, type Browser } from '../support/browser.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const OUT = fileURLToPath(new URL('../../docs/console/', import.meta.url));
const ADMIN = `admin-screenshots-${'s'.repeat(40)}`;

let stack: Stack;
let browser: Browser;
const agents: ReachAgent[] = [];
let parentId = '';

const api = <T = Record<string, unknown>>(path: string, body?: unknown, method?: string) =>
  http<T>(`${stack.routerUrl}${path}`, {
    ...(body === undefined ? {} : { body }),
    ...(method ? { method } : {}),
    headers: { authorization: `Bearer ${ADMIN}` },
  });

/** A demo agent: answers after `ms`, fails (not retryable) when the payload asks it to. */
function demoAgent(agentId: string, capabilities: string[], ms: number, observe = false) {
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId,
    capabilities,
    maxConcurrency: 4,
    region: agentId.startsWith('eu') ? 'eu-west' : 'us-east',
    apiKey: ADMIN,
    shared: true,
    ...(observe ? { observe: true } : {}),
    handler: async (task: TaskContext) => {
      const input = (task.payload ?? {}) as { fail?: boolean; hold?: boolean };
      await new Promise((r) => setTimeout(r, input.hold ? 120_000 : ms * (0.5 + Math.random())));
      if (input.fail) throw new NonRetryableError('the document could not be parsed');
      return { summary: `done by ${agentId}`, words: Math.round(Math.random() * 500) };
    },
    shutdownTimeoutMs: 500,
    logger: pino({ level: 'silent' }),
  });
  agents.push(agent);
  agent.start();
  return agent.ready();
}

async function submit(tenantKey: string, body: Record<string, unknown>): Promise<string> {
  const res = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
    body,
    headers: { authorization: `Bearer ${tenantKey}` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.task_id;
}

beforeAll(async () => {
  stack = await startStack({
    influx: 'v1',
    env: { REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN, REACH_PROBE_MS: '1000' },
  });
  const keys: Record<string, string> = {};
  for (const tenant of ['acme', 'globex']) {
    const made = await api<{ key: string }>('/v1/keys', {
      tenant,
      role: 'caller',
      label: `${tenant} web app`,
    });
    keys[tenant] = made.body.key;
  }
  await api('/v1/keys', { tenant: 'acme', role: 'agent', label: 'acme summarizers' });
  await api('/v1/tenants/acme', { weight: 3, max_inflight: 200 }, 'PUT');
  await Promise.all([
    demoAgent('eu-summarizer-1', ['summarize', 'translate'], 80),
    demoAgent('us-summarizer-2', ['summarize'], 120),
    demoAgent('us-extractor-1', ['extract'], 60),
    demoAgent('eu-summarizer-canary', ['summarize'], 90, true),
  ]);
  for (let i = 0; i < 40; i++) {
    const tenant = i % 3 === 0 ? 'globex' : 'acme';
    await submit(keys[tenant]!, {
      capability: ['summarize', 'translate', 'extract'][i % 3],
      payload: { doc: `report-${i}.pdf`, fail: i % 13 === 5 },
    });
    await new Promise((r) => setTimeout(r, 40));
  }
  parentId = await submit(keys['acme']!, { capability: 'summarize', payload: { doc: 'book' } });
  for (let i = 0; i < 3; i++) {
    await submit(keys['acme']!, {
      capability: 'translate',
      parent_task_id: parentId,
      payload: { chapter: i + 1 },
    });
  }
  await submit(keys['acme']!, { capability: 'extract', payload: { fail: true } });
  await submit(keys['acme']!, { capability: 'summarize', payload: { hold: true } });
  await submit(keys['globex']!, { capability: 'transcribe', payload: {}, timeout_s: 600 });
  const every = 3600_000;
  await http(`${stack.routerUrl}/v1/schedules`, {
    body: { every_ms: every, task: { capability: 'summarize', payload: { doc: 'daily digest' } } },
    headers: { authorization: `Bearer ${keys['acme']}` },
  });
  await http(`${stack.routerUrl}/v1/schedules`, {
    body: { every_ms: 24 * every, task: { capability: 'extract', payload: { doc: 'invoices' } } },
    headers: { authorization: `Bearer ${keys['globex']}` },
  });
  await waitFor(
    async () => {
      const dead = await api<{ items: unknown[] }>('/v1/dlq');
      return dead.body.items.length >= 3 || undefined;
    },
    { timeoutMs: 20_000, message: 'no dead letters' },
  );
  browser = await openBrowser({ width: 1360, height: 900 });
  const login = await browser.page.request.post(`${stack.routerUrl}/v1/console/login`, {
    data: { key: ADMIN },
  });
  expect(login.status()).toBe(200);
  mkdirSync(OUT, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

/** Opens `path`, waits for `ready` and a moment for live figures, and saves `name`.png (the first screenful). */
async function shoot(path: string, ready: string, name: string): Promise<void> {
  const { page } = browser;
  await page.goto(`${stack.routerUrl}${path}`);
  await page.locator(ready).first().waitFor({ timeout: 20_000 });
  await page.waitForTimeout(1500);
  await page.screenshot({ path: join(OUT, `${name}.png`) });
}

describe('console screenshots', () => {
  it('shoots every page', async () => {
    await shoot('/console', '#agents tr[data-agent-id]', 'overview');
    await shoot('/console/tasks', '#tasks tr[data-task-id]', 'tasks');
    await shoot(
      `/console/tasks/${encodeURIComponent(`acme/${parentId}`)}`,
      '#task-timeline svg',
      'task',
    );
    await shoot('/console/agents', '#agents-list tbody tr[data-agent-id]', 'agents');
    await shoot('/console/agents/eu-summarizer-1', '#agent-status [data-status]', 'agent');
    await shoot('/console/capabilities', '#capabilities tr[data-capability]', 'capabilities');
    await shoot('/console/capabilities/summarize', '#chart-throughput rect.mark', 'capability');
    await shoot('/console/dead-letters', '#dlq tr[data-task-id]', 'dead-letters');
    await shoot('/console/schedules', '#schedules tr[data-schedule-id]', 'schedules');
    await shoot('/console/tenants', '#keys tr[data-key-id]', 'tenants');
    expect(browser.problems).toEqual([]);
  }, 120_000);
});
