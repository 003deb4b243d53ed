/**
 * Execution leases: a received task whose worker goes silent (process and heartbeats alive) is
 * taken back when its lease lapses and finished elsewhere, with one callback and the late result
 * refused; the SDK's renewals keep a long handler's task; `max_execution_ms` caps renewals.
 *
 * No check here rests on how long something took. A lease runs out at a time the task's timeline
 * gives (its receipt, by Redis' clock on this host, plus the lease); what the sweeper did about
 * it is looked at once two more full housekeeping passes have completed after that time, so at
 * least one of them began after it (test/support/passes.ts). Handlers that must outlive a lease
 * are held until then rather than sleeping a multiple of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { hold } from '../support/hold.ts';
import { morePasses, reached } from '../support/passes.ts';
import { FAST_LEASES, http, START_TIMEOUT_MS, startStack, type Stack } from '../support/stack.ts';

const LEASE_MS = 2000;
/** `capped` tasks hold a lease of a minute: within this file only their cap can take them back. */
const CAPPED_LEASE_MS = 60_000;

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
      REACH_EXEC_LEASE_MS_BY_CAPABILITY: JSON.stringify({ capped: CAPPED_LEASE_MS }),
      // Nothing but the lease takes a task back here.
      REACH_RECEIPT_TIMEOUT_MS: '60000',
      REACH_CONSUME_BOUND_MS: '60000',
      REACH_PROBE_MS: '60000',
      REACH_RETRY_BASE_MS: '100',
    },
  });
  redis = new Redis(stack.redisUrl);
  client = new ReachClient({ routerUrl: stack.routerUrl });
}, 2 * START_TIMEOUT_MS);

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
/** When attempt 1 of task `id` was received (Redis' time of the receipt), once it was. */
const receivedAt = (id: string) =>
  waitFor(
    async () =>
      (await view(id)).timeline.find((e) => e.stage === 'received' && e.attempt === 1)?.at,
    { message: `task ${id} was not received` },
  );
const refusedAcks = async (): Promise<number> => {
  const stats = await redis.hgetall(stack.keys.stats());
  return Object.entries(stats)
    .filter(([k]) => k.startsWith('acks_refused:'))
    .reduce((n, [, v]) => n + Number(v), 0);
};

describe('execution leases', () => {
  it('takes back a received task whose worker went silent once its lease ran out, at the next pass; one callback, the late result refused', async () => {
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
      const received = await receivedAt(sub.task_id);

      agents.push(await startAgent(stack, 'finisher-1', ['lease'], async (t) => t.payload));
      // Taken back by the first full pass that began once the lease had run out, never before.
      await reached(received + LEASE_MS);
      await morePasses(stack, 2, { message: 'no full pass ran after the lease ran out' });
      const back = await view(sub.task_id);
      const retried = back.timeline.find((e) => e.stage === 'retried');
      expect(retried?.reason).toBe('lease_lapse');
      expect(retried?.agent_id).toBe('hung-1');
      const lapseAfterMs = (retried?.at ?? 0) - received;
      expect(lapseAfterMs).toBeGreaterThanOrEqual(LEASE_MS);
      const done = await completed(sub.task_id);
      expect(done.agent_id).toBe('finisher-1');
      const completedAt = done.timeline.find((e) => e.stage === 'completed')?.at ?? 0;
      console.log(
        `lease ${LEASE_MS} ms: taken back ${lapseAfterMs} ms and completed elsewhere ${completedAt - received} ms after the receipt`,
      );
      // The slot is free on the hung agent, whose heartbeats went on all along.
      const keys = stack.keys;
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
      const received = Math.max(...(await Promise.all(ids.map(receivedAt))));
      // Renewed every third of the lease, as docs/PROTOCOL.md shows (that pause is the protocol's
      // cadence, not a wait for anything), until full passes that began after the unrenewed
      // leases would have run out have left both tasks where they are.
      let renewing = true;
      const renewals = (async () => {
        while (renewing) {
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
      })();
      try {
        await reached(received + LEASE_MS);
        await morePasses(stack, 2, {
          message: 'no full pass ran after the leases would have lapsed',
        });
      } finally {
        renewing = false;
        await renewals;
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
    const held = hold();
    agents.push(
      await startAgent(stack, 'long-1', ['long'], async (t) => {
        await held.wait;
        return t.payload;
      }),
    );
    const sub = await client.submit({ capability: 'long', payload: 'slow' });
    try {
      // The handler runs until full passes that began after an unrenewed lease would have run out.
      await reached((await receivedAt(sub.task_id)) + LEASE_MS);
      await morePasses(stack, 2, { message: 'no full pass ran after the lease would have lapsed' });
    } finally {
      held.release();
    }
    const done = await completed(sub.task_id, 15_000);
    expect(done.agent_id).toBe('long-1');
    expect(done.attempts).toBe(1);
    expect(done.timeline.some((e) => e.stage === 'retried')).toBe(false);
  });

  it('caps an attempt at max_execution_ms: taken back at the cap, its lease live', async () => {
    const CAP_MS = 1000;
    const held = hold();
    agents.push(
      await startAgent(stack, 'capped-1', ['capped'], async (t) => {
        await held.wait;
        return t.payload;
      }),
    );
    const sub = await client.submit({
      capability: 'capped',
      payload: 'capped',
      max_execution_ms: CAP_MS,
    });
    try {
      // Its lease (a minute, renewed by the SDK) is far off: only the cap takes the attempt back,
      // at the first full pass that began once the cap was reached, never before.
      const received = await receivedAt(sub.task_id);
      await reached(received + CAP_MS);
      await morePasses(stack, 2, { message: 'no full pass ran after the cap' });
      const t = await view(sub.task_id);
      const retried = t.timeline.find((e) => e.stage === 'retried');
      expect(retried?.reason).toBe('lease_lapse');
      expect((retried?.at ?? 0) - received).toBeGreaterThanOrEqual(CAP_MS);
    } finally {
      held.release();
    }
  });
});
