/**
 * Execution leases: a received task whose worker goes silent (process and heartbeats alive) is
 * taken back when its lease lapses and finished elsewhere, with one callback and the late result
 * refused; the SDK's renewals keep a long handler's task; `max_execution_ms` caps renewals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { reachKeys } from '@agent-reach/protocol';
import { ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const LEASE_MS = 2000;
const SWEEP_MS = Number(FAST_LEASES.REACH_SWEEP_MS);

let stack: Stack;
let redis: Redis;
let client: ReachClient;
const agents: ReachAgent[] = [];

type TaskView = {
  status: string;
  agent_id: string;
  attempts: number;
  result?: unknown;
  timeline: { stage: string; at: number; agent_id?: string; attempt?: number; reason?: string }[];
};
type Reg = {
  agent_id: string;
  instance_id: string;
  token: string;
  epoch: number;
  stream: string;
  group: string;
  acks_stream: string;
  exec_lease_ms?: number;
};
type Entry = [string, string[]];

beforeAll(async () => {
  stack = await startStack({
    env: {
      ...FAST_LEASES,
      REACH_EXEC_LEASE_MS: String(LEASE_MS),
      // Nothing but the lease takes a task back here.
      REACH_RECEIPT_TIMEOUT_MS: '60000',
      REACH_CONSUME_BOUND_MS: '60000',
      REACH_PROBE_MS: '60000',
      REACH_RETRY_BASE_MS: '100',
    },
  });
  redis = new Redis(stack.redisUrl);
  client = new ReachClient({ routerUrl: stack.routerUrl });
});

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await redis?.quit();
  await stack?.stop();
});

const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;
const completed = (id: string, timeoutMs = 10_000) =>
  waitFor(
    async () => {
      const t = await view(id);
      return t.status === 'completed' ? t : undefined;
    },
    { timeoutMs, message: `task ${id} did not complete` },
  );
const refusedAcks = async (): Promise<number> => {
  const stats = await redis.hgetall(reachKeys(stack.prefix).stats());
  return Object.entries(stats)
    .filter(([k]) => k.startsWith('acks_refused:'))
    .reduce((n, [, v]) => n + Number(v), 0);
};

describe('execution leases', () => {
  it('takes back a received task whose worker went silent, within the lease plus a sweep; one callback, the late result refused', async () => {
    // A raw worker (docs/PROTOCOL.md): registers, heartbeats, reads the task, reports its receipt,
    // then its handler hangs: no renewal, no result, heartbeats going on.
    const reg = (
      await http<Reg>(`${stack.registryUrl}/v1/agents/register`, {
        body: { agent_id: 'hung-1', capabilities: ['lease'], max_concurrency: 4 },
      })
    ).body;
    expect(reg.exec_lease_ms).toBe(LEASE_MS);
    const beat = setInterval(
      () =>
        void http(`${stack.registryUrl}/v1/agents/hung-1/heartbeat`, {
          body: { inflight: 1 },
          headers: { authorization: `Bearer ${reg.token}` },
        }).catch(() => undefined),
      150,
    );
    const raw = new Redis(stack.redisUrl);
    try {
      const sub = await client.submit({
        capability: 'lease',
        payload: { n: 1 },
        callback_topic: 'lease-cb',
      });
      expect(sub.agent_id).toBe('hung-1');
      const read = (await raw.call(
        'XREADGROUP',
        'GROUP',
        reg.group,
        reg.instance_id,
        'COUNT',
        '1',
        'STREAMS',
        reg.stream,
        '>',
      )) as [string, Entry[]][];
      const [entryId] = read[0]?.[1][0] ?? [''];
      const common = [
        'task_id',
        sub.task_id,
        'agent_id',
        'hung-1',
        'instance_id',
        reg.instance_id,
        'epoch',
        String(reg.epoch),
        'attempt',
        '1',
      ];
      await raw.call('XADD', reg.acks_stream, '*', ...common, 'stage', 'received');
      await waitFor(async () => (await view(sub.task_id)).status === 'received');

      agents.push(await startAgent(stack, 'finisher-1', ['lease'], async (t) => t.payload));
      const done = await completed(sub.task_id);
      expect(done.agent_id).toBe('finisher-1');
      const received = done.timeline.find((e) => e.stage === 'received' && e.attempt === 1);
      const retried = done.timeline.find((e) => e.stage === 'retried');
      expect(retried?.reason).toBe('lease_lapse');
      expect(retried?.agent_id).toBe('hung-1');
      // Within the lease plus one sweep (and the time a sweep pass takes).
      const lapseAfterMs = (retried?.at ?? 0) - (received?.at ?? 0);
      expect(lapseAfterMs).toBeGreaterThanOrEqual(LEASE_MS);
      expect(lapseAfterMs).toBeLessThan(LEASE_MS + SWEEP_MS + 400);
      const completedAt = done.timeline.find((e) => e.stage === 'completed')?.at ?? 0;
      console.log(
        `lease ${LEASE_MS} ms, sweep ${SWEEP_MS} ms: taken back ${lapseAfterMs} ms and completed elsewhere ${completedAt - (received?.at ?? 0)} ms after the receipt`,
      );
      expect(completedAt - (received?.at ?? 0)).toBeLessThan(LEASE_MS + SWEEP_MS + 1500);
      // The slot is free on the hung agent, whose heartbeats went on all along.
      const keys = reachKeys(stack.prefix);
      expect(await redis.hlen(keys.pending('hung-1'))).toBe(0);

      // The hung handler wakes up and reports: refused, nothing changes.
      const before = await refusedAcks();
      await raw.call(
        'XADD',
        reg.acks_stream,
        '*',
        ...common,
        'stage',
        'completed',
        'result',
        '"late"',
      );
      await raw.call('XACK', reg.stream, reg.group, entryId ?? '');
      await waitFor(async () => (await refusedAcks()) > before, {
        message: 'the late result was not refused',
      });
      const after = await view(sub.task_id);
      expect(after.agent_id).toBe('finisher-1');
      expect(after.result).toEqual({ n: 1 });
      const cb = await http<{ items: { task_id: string; status: string; agent_id: string }[] }>(
        `${stack.routerUrl}/v1/callbacks/lease-cb?after=0`,
      );
      expect(cb.body.items.filter((i) => i.task_id === sub.task_id)).toEqual([
        expect.objectContaining({ status: 'completed', agent_id: 'finisher-1' }),
      ]);
    } finally {
      clearInterval(beat);
      raw.disconnect();
    }
  });

  it('keeps a raw worker’s task while it renews by the protocol (one renew ack for all its tasks)', async () => {
    const reg = (
      await http<Reg>(`${stack.registryUrl}/v1/agents/register`, {
        body: { agent_id: 'renewer-1', capabilities: ['renewed'], max_concurrency: 4 },
      })
    ).body;
    const raw = new Redis(stack.redisUrl);
    const beat = setInterval(
      () =>
        void http(`${stack.registryUrl}/v1/agents/renewer-1/heartbeat`, {
          body: { inflight: 2 },
          headers: { authorization: `Bearer ${reg.token}` },
        }).catch(() => undefined),
      150,
    );
    try {
      const subs = [
        await client.submit({ capability: 'renewed', payload: 1 }),
        await client.submit({ capability: 'renewed', payload: 2 }),
      ];
      const read = (await raw.call(
        'XREADGROUP',
        'GROUP',
        reg.group,
        reg.instance_id,
        'COUNT',
        '10',
        'STREAMS',
        reg.stream,
        '>',
      )) as [string, Entry[]][];
      const entries = read[0]?.[1] ?? [];
      expect(entries).toHaveLength(2);
      const who = [
        'agent_id',
        'renewer-1',
        'instance_id',
        reg.instance_id,
        'epoch',
        String(reg.epoch),
      ];
      const ids = subs.map((s) => s.task_id);
      for (const id of ids)
        await raw.call(
          'XADD',
          reg.acks_stream,
          '*',
          'task_id',
          id,
          'stage',
          'received',
          ...who,
          'attempt',
          '1',
        );
      // Renewed every third of the lease for twice the lease, as docs/PROTOCOL.md shows.
      const until = Date.now() + 2 * LEASE_MS;
      while (Date.now() < until) {
        await raw.call(
          'XADD',
          reg.acks_stream,
          '*',
          'task_id',
          ids[0] as string,
          'stage',
          'renew',
          ...who,
          'task_ids',
          ids.join(' '),
        );
        await new Promise((r) => setTimeout(r, LEASE_MS / 3));
      }
      for (const [i, [entryId]] of entries.entries()) {
        await raw.call(
          'XADD',
          reg.acks_stream,
          '*',
          'task_id',
          ids[i] as string,
          'stage',
          'completed',
          ...who,
          'attempt',
          '1',
          'result',
          '"done"',
        );
        await raw.call('XACK', reg.stream, reg.group, entryId);
      }
      for (const id of ids) {
        const done = await completed(id);
        expect(done.agent_id).toBe('renewer-1');
        expect(done.attempts).toBe(1);
        expect(done.timeline.some((e) => e.stage === 'retried')).toBe(false);
      }
    } finally {
      clearInterval(beat);
      raw.disconnect();
    }
  });

  it('keeps the task of a handler that runs past the lease: the SDK renews it', async () => {
    agents.push(
      await startAgent(stack, 'long-1', ['long'], async (t) => {
        await new Promise((r) => setTimeout(r, LEASE_MS * 2));
        return t.payload;
      }),
    );
    const sub = await client.submit({ capability: 'long', payload: 'slow' });
    const done = await completed(sub.task_id, 15_000);
    expect(done.agent_id).toBe('long-1');
    expect(done.attempts).toBe(1);
    expect(done.timeline.some((e) => e.stage === 'retried')).toBe(false);
  });

  it('caps renewals at max_execution_ms: the attempt is taken back, renewals or not', async () => {
    agents.push(
      await startAgent(stack, 'capped-1', ['capped'], async (t) => {
        await new Promise((r) => setTimeout(r, LEASE_MS * 2));
        return t.payload;
      }),
    );
    const sub = await client.submit({
      capability: 'capped',
      payload: 'capped',
      max_execution_ms: 1000,
    });
    const t = await waitFor(
      async () => {
        const v = await view(sub.task_id);
        return v.timeline.some((e) => e.stage === 'retried') ? v : undefined;
      },
      { timeoutMs: 10_000, message: 'the capped attempt was not taken back' },
    );
    const received = t.timeline.find((e) => e.stage === 'received' && e.attempt === 1);
    const retried = t.timeline.find((e) => e.stage === 'retried');
    expect(retried?.reason).toBe('lease_lapse');
    // At the cap, well before the lease (renewed by the SDK all along) would have lapsed.
    const afterMs = (retried?.at ?? 0) - (received?.at ?? 0);
    expect(afterMs).toBeGreaterThanOrEqual(1000);
    expect(afterMs).toBeLessThan(1000 + SWEEP_MS + 400);
  });
});
