/**
 * An agent's standing comes from its outcomes and deep probes, not from its heartbeat alone: an
 * agent that fails every task turns DEGRADED and stops attracting traffic while callers still
 * succeed through retries; failing health() checks make an agent SUSPECT until one passes; and
 * `ready: false` stops new tasks without losing running ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { morePasses } from '../support/passes.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';
import pino from 'pino';
import { Redis } from 'ioredis';
import { decodeFleetEvent } from '@agent-reach/protocol';
import { ReachAgent as Agent } from '@agent-reach/worker-sdk';

let stack: Stack;
const agents: ReachAgent[] = [];
let client: ReachClient;

type AgentView = { agent_id: string; status: string; health_score: number; degraded_until: number };

const agentView = async (id: string) =>
  (await http<AgentView>(`${stack.registryUrl}/v1/agents/${id}`)).body;

/** Runs `n` tasks of `capability`, `concurrency` at a time; resolves with how many completed. */
async function runMany(capability: string, n: number, concurrency: number): Promise<number> {
  let next = 0;
  let completed = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      try {
        await client.run(capability, { i }, { timeoutMs: 20_000 });
        completed++;
      } catch {
        // counted as not completed
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return completed;
}

beforeAll(async () => {
  stack = await startStack({
    env: {
      ...FAST_LEASES,
      REACH_PROBE_MS: '300',
      // Longer than the test: a DEGRADED agent stays so throughout.
      REACH_DEGRADE_COOLDOWN_MS: '600000',
      REACH_RETRY_BASE_MS: '50',
      REACH_RETRY_CAP_MS: '200',
      REACH_MAX_ATTEMPTS: '4',
    },
  });
  client = new ReachClient({ routerUrl: stack.routerUrl });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

describe('health from outcomes', () => {
  it('turns an agent that fails every task DEGRADED: it gets < 10 % of the next 200 tasks and callers see > 95 % success', async () => {
    const calls = { good: 0, bad: 0 };
    agents.push(
      await startAgent(
        stack,
        'h-good',
        ['work'],
        async (t) => {
          calls.good++;
          return t.payload;
        },
        { maxConcurrency: 16 },
      ),
      await startAgent(
        stack,
        'h-bad',
        ['work'],
        async () => {
          calls.bad++;
          throw new Error('model not loaded');
        },
        { maxConcurrency: 16 },
      ),
    );
    // Until the bad agent has 20 tasks in its window, it takes its share and fails each.
    const startedAt = Date.now();
    await waitFor(
      async () => {
        await runMany('work', 10, 5);
        return (await agentView('h-bad')).status === 'DEGRADED';
      },
      { timeoutMs: 30_000, message: 'the failing agent never turned DEGRADED' },
    );
    const bad = await agentView('h-bad');
    const before = { ...calls, ms: Date.now() - startedAt };
    expect(bad.health_score).toBeLessThan(50);
    expect(bad.degraded_until).toBeGreaterThan(Date.now());
    // The healthy one stays so. Its score is 100 from its outcomes, less what its runtime
    // figures take (this test's agents share a loaded event loop): well above the failing one's.
    const healthy = await agentView('h-good');
    expect(healthy.status).toBe('HEALTHY');
    expect(healthy.health_score).toBeGreaterThanOrEqual(60);

    calls.good = 0;
    calls.bad = 0;
    const completed = await runMany('work', 200, 8);
    // Each of the 200 tasks ran on one agent at least; the bad one took under 10 % of them.
    expect(calls.bad).toBeLessThan(20);
    expect(completed / 200).toBeGreaterThan(0.95);
    expect((await agentView('h-bad')).status).toBe('DEGRADED');

    console.log(
      `DEGRADED after ${before.ms} ms and ${before.bad} attempts on it (${before.good} on the healthy one); then ${calls.bad} of 200 tasks ran on it (${calls.good} on the healthy one), ${completed} of 200 completed`,
    );
    // The change is in the fleet events with its reason.
    const conn = new Redis(stack.redisUrl);
    try {
      const events = (await conn.xrange(stack.keys.fleetEvents(), '-', '+')).map(([, fields]) =>
        decodeFleetEvent(fields),
      );
      expect(
        events.find((e) => e?.kind === 'status' && e.agent_id === 'h-bad' && e.to === 'DEGRADED'),
      ).toMatchObject({
        from: 'HEALTHY',
        reason: expect.stringMatching(/errors in its last \d+ tasks/),
      });
    } finally {
      await conn.quit();
    }

    // With no HEALTHY agent able to take it, a task goes to the DEGRADED one, and its timeline
    // says so.
    const good = agents[0] as ReachAgent;
    await good.markNotReady();
    await waitFor(async () => (await agentView('h-good')).status === 'STARTING', {
      timeoutMs: 5000,
      message: 'the healthy agent never stopped taking tasks',
    });
    const { task_id } = await client.submit({ capability: 'work', payload: { overflow: true } });
    const sent = await waitFor(
      async () => {
        const task = (
          await http<{
            timeline: { stage: string; agent_id?: string; routing?: { agent_status?: string } }[];
          }>(`${stack.routerUrl}/v1/tasks/${task_id}`)
        ).body;
        return task.timeline?.find((e) => e.stage === 'sent' && e.agent_id === 'h-bad');
      },
      { timeoutMs: 10_000, message: 'the task never went to the DEGRADED agent' },
    );
    expect(sent.routing?.agent_status).toBe('DEGRADED');
    await good.markReady();
    await waitFor(async () => (await agentView('h-good')).status === 'HEALTHY', {
      timeoutMs: 5000,
      message: 'the healthy agent never came back',
    });
  }, 90_000);
});

describe('deep probes', () => {
  it('makes an agent whose health() fails three times in a row SUSPECT, and a passing probe brings it back', async () => {
    let healthy = true;
    const agent = new Agent({
      registryUrl: stack.registryUrl,
      routerUrl: stack.routerUrl,
      redisUrl: stack.redisUrl,
      agentId: 'h-probed',
      capabilities: ['probed'],
      handler: async (t) => t.payload,
      health: () => healthy,
      healthTimeoutMs: 200,
      logger: pino({ level: 'silent' }),
    });
    agents.push(agent);
    await agent.start().ready();
    await waitFor(async () => (await agentView('h-probed')).status === 'HEALTHY', {
      timeoutMs: 10_000,
      message: 'never HEALTHY',
    });
    healthy = false;
    await waitFor(async () => (await agentView('h-probed')).status === 'SUSPECT', {
      timeoutMs: 10_000,
      message: 'failing probes never made the agent SUSPECT',
    });
    // Heartbeats keep coming, yet it stays SUSPECT while its probes fail.
    const lastBeat = (
      await http<{ last_heartbeat_at: number }>(`${stack.registryUrl}/v1/agents/h-probed`)
    ).body.last_heartbeat_at;
    await waitFor(
      async () =>
        (await http<{ last_heartbeat_at: number }>(`${stack.registryUrl}/v1/agents/h-probed`)).body
          .last_heartbeat_at > lastBeat,
      { timeoutMs: 5000, message: 'no heartbeat' },
    );
    // ... and registry-sync has swept since that heartbeat.
    await morePasses(stack, 2);
    expect((await agentView('h-probed')).status).toBe('SUSPECT');
    healthy = true;
    await waitFor(async () => (await agentView('h-probed')).status === 'HEALTHY', {
      timeoutMs: 10_000,
      message: 'a passing probe never brought the agent back',
    });
  }, 40_000);
});

describe('ready toggling', () => {
  it('ready: false stops new tasks without losing the running one; ready: true brings them back', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const ran: Record<string, number> = { 'h-a': 0, 'h-b': 0 };
    const handlerOf = (id: string) => async (t: { payload: unknown }) => {
      ran[id] = (ran[id] ?? 0) + 1;
      if ((t.payload as { hold?: boolean }).hold) await gate;
      return t.payload;
    };
    const a = await startAgent(stack, 'h-a', ['toggle'], handlerOf('h-a'), { maxConcurrency: 4 });
    const b = await startAgent(stack, 'h-b', ['toggle'], handlerOf('h-b'), { maxConcurrency: 4 });
    agents.push(a, b);
    // A long task on h-a (h-b not ready yet, so it cannot go elsewhere).
    await b.markNotReady();
    await waitFor(async () => (await agentView('h-b')).status === 'STARTING', {
      timeoutMs: 5000,
      message: 'h-b never stopped taking tasks',
    });
    const held = client.run('toggle', { hold: true }, { timeoutMs: 20_000 });
    await waitFor(() => ran['h-a'] === 1, { timeoutMs: 5000, message: 'the held task never ran' });
    await a.markNotReady();
    await waitFor(async () => (await agentView('h-a')).status === 'STARTING', {
      timeoutMs: 5000,
      message: 'h-a never stopped taking tasks',
    });
    await b.markReady();
    await waitFor(async () => (await agentView('h-b')).status === 'HEALTHY', {
      timeoutMs: 5000,
      message: 'h-b never came back',
    });
    // New tasks go to h-b only, while h-a's running task goes on.
    expect(await runMany('toggle', 10, 2)).toBe(10);
    expect(ran['h-a']).toBe(1);
    expect(ran['h-b']).toBe(10);
    release();
    expect(await held).toEqual({ hold: true });
    await a.markReady();
    await waitFor(async () => (await agentView('h-a')).status === 'HEALTHY', {
      timeoutMs: 5000,
      message: 'h-a never came back',
    });
    await b.markNotReady();
    await waitFor(async () => (await agentView('h-b')).status === 'STARTING', {
      timeoutMs: 5000,
      message: 'h-b never stopped again',
    });
    expect(await runMany('toggle', 5, 1)).toBe(5);
    expect(ran['h-a']).toBe(6);
  }, 40_000);
});
