import { PROBE_CAPABILITY, WORKER_GROUP, decodeAck } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { NonRetryableError } from '../errors.ts';
import { startHarness, type Harness } from '../testing/harness.ts';
import { Gate, pendingCount } from '../testing/support.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** Entries read and not yet XACKed over all these streams, counted in one MULTI so the sum is one instant's. */
async function pendingTotal(harness: Harness, streams: readonly string[]): Promise<number> {
  const multi = harness.redis.multi();
  for (const s of streams) multi.xpending(s, WORKER_GROUP);
  const replies = (await multi.exec()) ?? [];
  return replies.reduce((sum, [err, summary]) => {
    if (err !== null) throw err;
    return sum + (summary as [number])[0];
  }, 0);
}

/** Names of the consumers of the stream's group (XREADGROUP creates one on its first call). */
async function consumersOf(harness: Harness, stream: string): Promise<string[]> {
  const rows = (await harness.redis.xinfo('CONSUMERS', stream, WORKER_GROUP)) as unknown[][];
  return rows.map((row) => String(row[row.indexOf('name') + 1]));
}

describe('a pull agent', () => {
  it.each([1, 2, 4])(
    'with two capabilities reads both pools and its inbox, never holding more than maxConcurrency (%i); acks name the pool entry',
    async (maxConcurrency) => {
      h = await startHarness();
      const harness = h;
      const gates = new Map<string, Gate>();
      const gate = (id: string): Gate => {
        const known = gates.get(id);
        if (known !== undefined) return known;
        const made = new Gate();
        gates.set(id, made);
        return made;
      };
      const running = new Set<string>();
      const agent = harness.agent({
        channel: 'pull',
        capabilities: ['embed', 'rank'],
        maxConcurrency,
        handler: async (task) => {
          running.add(task.taskId);
          await gate(task.taskId).promise;
          running.delete(task.taskId);
          if (task.taskId === 'r2') throw new NonRetryableError('cannot rank this');
          return `${task.capability}:${task.taskId}`;
        },
      });
      const reg = await agent.start().ready();
      const pools = {
        embed: harness.registry.keys.pool('embed'),
        rank: harness.registry.keys.pool('rank'),
      };
      expect(reg.pools).toEqual([pools.embed, pools.rank]);
      expect(harness.registry.registers[0]).toMatchObject({ channel: 'pull' });

      const entryIds = new Map<string, string>();
      for (const id of ['e1', 'e2', 'e3'])
        entryIds.set(id, await harness.addPoolTask('embed', { task_id: id }));
      for (const id of ['r1', 'r2', 'r3'])
        entryIds.set(id, await harness.addPoolTask('rank', { task_id: id }));
      await harness.addTask(reg.agent_id, { task_id: 'i1' });
      const all = [...entryIds.keys(), 'i1'];
      const streams = [reg.stream, pools.embed, pools.rank];

      // Sample what the agent holds, over the pools and the inbox, throughout.
      let maxPending = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          maxPending = Math.max(maxPending, await pendingTotal(harness, streams));
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const finals = async (): Promise<number> =>
        (await harness.acks()).filter((a) => a.fields['stage'] !== 'received').length;

      let left = all.length;
      while (left > 0) {
        // The agent fills every free slot, whichever stream the work is on; then that batch is let go.
        const batch = await waitFor(
          () => running.size === Math.min(maxConcurrency, left) && [...running],
          {
            message: `${Math.min(maxConcurrency, left)} tasks running`,
          },
        );
        expect(agent.inflight).toBeLessThanOrEqual(maxConcurrency);
        for (const id of batch) gate(id).open();
        const done = all.length - left + batch.length;
        await waitFor(async () => (await finals()) === done, { message: `${done} tasks finished` });
        left -= batch.length;
      }
      sampling = false;
      await sampler;
      expect(maxPending).toBeLessThanOrEqual(maxConcurrency);
      expect(maxPending).toBe(Math.min(maxConcurrency, all.length));

      for (const [taskId, messageId] of entryIds) {
        const pool = taskId.startsWith('e') ? 'embed' : 'rank';
        const acks = await harness.acksOf(taskId);
        expect(acks.map((a) => a['stage'])).toEqual([
          'received',
          taskId === 'r2' ? 'failed' : 'completed',
        ]);
        for (const ack of acks) {
          expect(ack).toMatchObject({
            pool,
            message_id: messageId,
            agent_id: reg.agent_id,
            epoch: String(reg.epoch),
          });
          expect(decodeAck(Object.entries(ack).flat())).toMatchObject({
            ok: true,
            value: { pool, message_id: messageId },
          });
        }
      }
      expect((await harness.acksOf('r2'))[1]).toMatchObject({
        stage: 'failed',
        retryable: 'false',
      });
      expect((await harness.acksOf('e1'))[1]).toMatchObject({
        stage: 'completed',
        result: '"embed:e1"',
      });
      const inbox = await harness.acksOf('i1');
      expect(inbox.map((a) => a['stage'])).toEqual(['received', 'completed']);
      for (const ack of inbox) {
        expect(ack).not.toHaveProperty('pool');
        expect(ack).not.toHaveProperty('message_id');
      }
      // XACKed on the stream each entry came from.
      await waitFor(async () => (await pendingTotal(harness, streams)) === 0, {
        message: 'all XACKed',
      });
      for (const pool of [pools.embed, pools.rank])
        expect(await consumersOf(harness, pool)).toEqual([reg.instance_id]);
    },
  );

  it('answers a probe in its inbox, without pool fields', async () => {
    h = await startHarness();
    const agent = h.agent({
      channel: 'pull',
      capabilities: ['embed'],
      handler: () => Promise.resolve('unused'),
    });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, {
      task_id: 'probe:pull',
      capability: PROBE_CAPABILITY,
      payload: '{"sent_at":1}',
    });
    expect(await h.waitForAcks('probe:pull', 2)).toEqual([
      {
        task_id: 'probe:pull',
        agent_id: reg.agent_id,
        instance_id: reg.instance_id,
        epoch: String(reg.epoch),
        attempt: '1',
        stage: 'received',
      },
      {
        task_id: 'probe:pull',
        agent_id: reg.agent_id,
        instance_id: reg.instance_id,
        epoch: String(reg.epoch),
        attempt: '1',
        stage: 'completed',
        result: '{"sent_at":1}',
        duration_ms: '0',
        capability: PROBE_CAPABILITY,
        received_ago_ms: expect.stringMatching(/^\d+$/),
      },
    ]);
    await waitFor(async () => (await pendingCount(h!.redis, reg.stream, WORKER_GROUP)) === 0, {
      message: 'probe XACKed',
    });
  });

  it('re-registers when a pool’s group is gone, then reads the pool again', async () => {
    h = await startHarness();
    const agent = h.agent({
      channel: 'pull',
      capabilities: ['embed'],
      blockMs: 100,
      handler: (t) => Promise.resolve(t.taskId),
    });
    const reg = await agent.start().ready();
    const pool = h.registry.keys.pool('embed');
    await h.redis.xgroup('DESTROY', pool, WORKER_GROUP);
    await waitFor(() => h!.registry.registers.length === 2, {
      message: 're-registered after NOGROUP',
    });
    await h.addPoolTask('embed', { task_id: 'regrouped' });
    expect((await h.waitForAcks('regrouped', 2))[1]).toMatchObject({
      stage: 'completed',
      pool: 'embed',
    });
    expect(agent.state).toBe('running');
    expect(agent.registration?.pools).toEqual(reg.pools);
  });

  it('a restart with the same instance_id finishes the pool entries it had read and never acknowledged', async () => {
    h = await startHarness();
    const pool = h.registry.keys.pool('embed');
    await h.redis.xgroup('CREATE', pool, WORKER_GROUP, '$', 'MKSTREAM');
    const messageId = await h.addPoolTask('embed', { task_id: 'orphan', payload: '"again"' });
    // The previous life of this instance read it, then died.
    await h.redis.xreadgroup('GROUP', WORKER_GROUP, 'inst-pull', 'COUNT', 10, 'STREAMS', pool, '>');
    const agent = h.agent({
      channel: 'pull',
      capabilities: ['embed'],
      instanceId: 'inst-pull',
      handler: (t) => Promise.resolve(t.payload),
    });
    await agent.start().ready();
    expect((await h.waitForAcks('orphan', 2))[1]).toMatchObject({
      stage: 'completed',
      result: '"again"',
      pool: 'embed',
      message_id: messageId,
    });
    await waitFor(async () => (await pendingCount(h!.redis, pool, WORKER_GROUP)) === 0, {
      message: 'orphan XACKed',
    });
  });
});

describe('a push agent', () => {
  it('ignores pools, even when the register reply lists them', async () => {
    h = await startHarness();
    h.registry.sendPoolsToPush(true);
    const agent = h.agent({
      capabilities: ['embed'],
      blockMs: 100,
      handler: (t) => Promise.resolve(t.taskId),
    });
    const reg = await agent.start().ready();
    const pool = h.registry.keys.pool('embed');
    expect(reg.pools).toEqual([pool]);
    await h.addPoolTask('embed', { task_id: 'pooled' });
    await h.addTask(reg.agent_id, { task_id: 'pushed', capability: 'embed' });
    expect((await h.waitForAcks('pushed', 2))[1]).toMatchObject({
      stage: 'completed',
      result: '"pushed"',
    });
    expect((await h.acksOf('pushed')).some((a) => 'pool' in a)).toBe(false);
    // Let it go round its loop again: blocked in a new XREADGROUP after the task.
    const name = `reach:${reg.agent_id}:read`;
    await waitFor(
      async () => {
        const list = (await h!.redis.client('LIST')) as string;
        return list
          .split('\n')
          .some((line) => line.includes(`name=${name} `) && line.includes('cmd=xreadgroup'));
      },
      { message: 'agent blocked in XREADGROUP' },
    );
    // An XREADGROUP on the pool would have made the instance a consumer of its group.
    expect(await consumersOf(h, pool)).toEqual([]);
    expect(await h.acksOf('pooled')).toEqual([]);
    expect(await h.redis.xlen(pool)).toBe(1);
  });
});
