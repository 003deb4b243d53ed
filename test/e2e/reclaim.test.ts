/**
 * Tasks on an agent that dies, stalls or leaves are taken back and finished elsewhere; a stale
 * instance can do nothing; a loop is cut.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';

let stack: Stack;
let redis: TestRedis;
let client: ReachClient;
const agents: ReachAgent[] = [];

type TaskView = {
  status: string;
  agent_id: string;
  attempts: number;
  dead_reason?: string;
  timeline: { stage: string; at: number; agent_id?: string; reason?: string }[];
};
type Reg = { token: string; epoch: number; stream: string; group: string; acks_stream: string };

beforeAll(async () => {
  stack = await startStack({
    env: {
      ...FAST_LEASES,
      REACH_RECEIPT_TIMEOUT_MS: '3000',
      REACH_CONSUME_BOUND_MS: '1000',
      REACH_PROBE_MS: '500',
      REACH_RETRY_BASE_MS: '100',
    },
  });
  redis = connectRedis(stack);
  client = new ReachClient({ routerUrl: stack.routerUrl });
});

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await redis?.quit();
  await stack?.stop();
});

const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;
const register = (body: Record<string, unknown>) =>
  http<Reg>(`${stack.registryUrl}/v1/agents/register`, { body });
const heartbeat = (id: string, token: string, extra: Record<string, unknown> = {}) =>
  http<{ status: string; error?: string }>(`${stack.registryUrl}/v1/agents/${id}/heartbeat`, {
    body: { inflight: 0, ...extra },
    headers: { authorization: `Bearer ${token}` },
  });

describe('taking tasks back', () => {
  it('re-routes the tasks of an agent that goes OFFLINE, within the offline bound plus a sweep', async () => {
    // A silent agent (registered, never heartbeats, never reads) gets the tasks first.
    await register({ agent_id: 'silent-1', capabilities: ['reroute'], max_concurrency: 10 });
    const subs = await Promise.all(
      Array.from({ length: 5 }, (_, i) => client.submit({ capability: 'reroute', payload: i })),
    );
    expect(subs.every((s) => s.agent_id === 'silent-1')).toBe(true);
    const wentAt = Date.now();
    agents.push(await startAgent(stack, 'alive-1', ['reroute'], async (t) => t.payload));
    for (const s of subs) {
      const v = await waitFor(
        async () => {
          const t = await view(s.task_id);
          return t.status === 'completed' ? t : undefined;
        },
        { timeoutMs: 10_000, message: `task ${s.task_id} was not re-routed` },
      );
      expect(v.agent_id).toBe('alive-1');
      expect(v.timeline.find((e) => e.stage === 'retried')?.reason).toBe('agent_offline');
    }
    // Offline after 2 s of silence (the agent registered just before `wentAt`), plus sweeps.
    expect(Date.now() - wentAt).toBeLessThan(2000 + 3000);
    const keys = stack.keys;
    expect(await redis.hlen(keys.pending('silent-1'))).toBe(0);
    expect(await redis.xlen(keys.inbox('silent-1'))).toBe(0);
  });

  it('retries a task nobody receives, and marks the agent that heartbeats but never reads SUSPECT', async () => {
    const zombie = await register({
      agent_id: 'zombie-1',
      capabilities: ['stuck'],
      max_concurrency: 10,
    });
    const beat = setInterval(() => void heartbeat('zombie-1', zombie.body.token), 150);
    try {
      const sub = await client.submit({ capability: 'stuck', payload: 1 });
      expect(sub.agent_id).toBe('zombie-1');
      await waitFor(
        async () => {
          const a = await http<{ status: string }>(`${stack.registryUrl}/v1/agents/zombie-1`);
          return a.body.status === 'SUSPECT';
        },
        { timeoutMs: 5000, message: 'a heartbeating agent that reads nothing stayed HEALTHY' },
      );
      agents.push(await startAgent(stack, 'reader-1', ['stuck'], async (t) => t.payload));
      const done = await waitFor(
        async () => {
          const t = await view(sub.task_id);
          return t.status === 'completed' ? t : undefined;
        },
        { timeoutMs: 8000 },
      );
      expect(done.agent_id).toBe('reader-1');
      expect(done.timeline.find((e) => e.stage === 'retried')?.reason).toBe('receipt_timeout');
      // Heartbeats alone do not clear the suspicion.
      expect((await heartbeat('zombie-1', zombie.body.token)).body.status).toBe('SUSPECT');
    } finally {
      clearInterval(beat);
    }
  });

  it('hands a draining agent’s unread tasks to others at once', async () => {
    const leaving = await register({
      agent_id: 'leaving-1',
      capabilities: ['handoff'],
      max_concurrency: 10,
    });
    const beat = setInterval(() => void heartbeat('leaving-1', leaving.body.token), 150);
    try {
      const subs = await Promise.all(
        Array.from({ length: 3 }, (_, i) => client.submit({ capability: 'handoff', payload: i })),
      );
      expect(subs.every((s) => s.agent_id === 'leaving-1')).toBe(true);
      agents.push(await startAgent(stack, 'staying-1', ['handoff'], async (t) => t.payload));
      const started = Date.now();
      const res = await http(`${stack.registryUrl}/v1/agents/leaving-1/deregister`, {
        method: 'POST',
        body: {},
        headers: { authorization: `Bearer ${leaving.body.token}` },
      });
      expect(res.status).toBe(200);
      for (const s of subs) {
        const v = await waitFor(
          async () => {
            const t = await view(s.task_id);
            return t.status === 'completed' ? t : undefined;
          },
          { timeoutMs: 5000 },
        );
        expect(v.timeline.find((e) => e.stage === 'retried')?.reason).toBe('handoff');
      }
      // Well before the receipt timeout or the offline bound.
      expect(Date.now() - started).toBeLessThan(1500);
      await waitFor(
        async () => (await http(`${stack.registryUrl}/v1/agents/leaving-1`)).status === 404,
        { message: 'drained agent not removed' },
      );
    } finally {
      clearInterval(beat);
    }
  });
});

describe('a stale instance', () => {
  it('cannot heartbeat, complete or be routed to once a new instance registered', async () => {
    const old = await register({
      agent_id: 'twin',
      instance_id: 'twin-old',
      capabilities: ['twin'],
      max_concurrency: 5,
    });
    const sub = await client.submit({ capability: 'twin', payload: 1 });
    const fresh = await register({
      agent_id: 'twin',
      instance_id: 'twin-new',
      capabilities: ['twin'],
      max_concurrency: 5,
    });
    expect(fresh.body.epoch).toBe(old.body.epoch + 1);
    const hb = await heartbeat('twin', old.body.token);
    expect(hb.status).toBe(409);
    expect(hb.body.error).toBe('STALE_EPOCH');
    const common = [
      'task_id',
      sub.task_id,
      'agent_id',
      'twin',
      'instance_id',
      'twin-old',
      'epoch',
      String(old.body.epoch),
      'attempt',
      '1',
    ];
    await redis.xadd(
      old.body.acks_stream,
      '*',
      ...common,
      'stage',
      'completed',
      'result',
      '"stale"',
    );
    await waitFor(
      async () =>
        Number(await redis.hget(`${stack.prefix}:stats`, 'acks_refused:stale_epoch')) >= 1,
    );
    // The task delivered under the old epoch is taken back and sent to the new instance.
    const retried = await waitFor(
      async () => {
        const t = await view(sub.task_id);
        return t.timeline.some((e) => e.stage === 'retried' && e.reason === 'fenced')
          ? t
          : undefined;
      },
      { timeoutMs: 5000 },
    );
    expect(retried.status).not.toBe('completed');
    const next = await client.submit({ capability: 'twin', payload: 2 });
    expect(next.agent_id).toBe('twin');
    const keys = stack.keys;
    const entries = await redis.xrange(keys.inbox('twin'), '-', '+');
    expect(entries.length).toBeGreaterThan(0);
    const pending = await redis.hgetall(keys.pending('twin'));
    for (const value of Object.values(pending))
      expect(value.split('|')[1]).toBe(String(fresh.body.epoch));
  });
});

describe('two-phase start and loops', () => {
  it('gives a registered but not-ready agent nothing until it reports ready', async () => {
    const reg = await register({
      agent_id: 'warming-1',
      capabilities: ['warm'],
      max_concurrency: 2,
      ready: false,
    });
    expect(
      (await http<{ status: string }>(`${stack.registryUrl}/v1/agents/warming-1`)).body.status,
    ).toBe('STARTING');
    const refused = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'warm', payload: 1, on_no_agent: 'reject' },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('NO_AGENT');
    expect((await heartbeat('warming-1', reg.body.token, { ready: true })).body.status).toBe(
      'HEALTHY',
    );
    const ok = await waitFor(async () => {
      const r = await http<{ agent_id: string }>(`${stack.routerUrl}/v1/tasks`, {
        body: { capability: 'warm', payload: 1 },
      });
      return r.status === 202 ? r : undefined;
    });
    expect(ok.body.agent_id).toBe('warming-1');
  });

  it('dead-letters a task that would come back to an agent already on its trace', async () => {
    agents.push(
      await startAgent(stack, 'looper-1', ['loop'], async (t) => {
        // The handler submits the same capability again: a loop through itself.
        const child = await t.submit({ capability: 'loop', payload: 'again' });
        return child.status;
      }),
    );
    const first = await client.submit({ capability: 'loop', payload: 'start' });
    const parent = await waitFor(async () => {
      const t = await view(first.task_id);
      return t.status === 'completed' ? t : undefined;
    });
    expect(parent).toBeDefined();
    const dlq = await http<{ items: { task_id: string; reason: string }[] }>(
      `${stack.routerUrl}/v1/dlq?capability=loop`,
    );
    expect(dlq.body.items).toHaveLength(1);
    expect(dlq.body.items[0]?.reason).toBe('loop');
    // The router wrote the dead stage as an event, like every other dead letter.
    const metrics = await (await fetch(`${stack.routerUrl}/metrics`)).text();
    expect(metrics).toMatch(/^reach_task_events_total\{[^}]*stage="dead"[^}]*\} 1$/m);
  });

  it('dead-letters a chain deeper than the hop limit', async () => {
    // Each agent hands the task to the next capability; hop 11 is over the default limit of 10.
    const caps = Array.from({ length: 12 }, (_, i) => `hop-${i}`);
    for (const [i, cap] of caps.entries()) {
      agents.push(
        await startAgent(stack, `hopper-${i}`, [cap], async (t) => {
          const next = caps[i + 1];
          return next ? (await t.submit({ capability: next, payload: i + 1 })).status : 'end';
        }),
      );
    }
    const first = await client.submit({ capability: 'hop-0', payload: 0 });
    await waitFor(async () => (await view(first.task_id)).status === 'completed', {
      timeoutMs: 10_000,
    });
    const dead = await waitFor(
      async () => {
        const d = await http<{ items: { task_id: string; reason: string; capability: string }[] }>(
          `${stack.routerUrl}/v1/dlq`,
        );
        return d.body.items.find((i) => i.capability.startsWith('hop-'));
      },
      { timeoutMs: 10_000 },
    );
    expect(dead.reason).toBe('loop');
    expect(dead.capability).toBe('hop-11');
  });
});
