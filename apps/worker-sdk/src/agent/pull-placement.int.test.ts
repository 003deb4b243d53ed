import { RELEASED_CONSUMER, WORKER_GROUP } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../testing/harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** Pool entries pending in the group, by consumer: `{ consumer: [entry ids] }`. */
async function pendingByConsumer(
  harness: Harness,
  pool: string,
): Promise<Record<string, string[]>> {
  const rows = (await harness.redis.xpending(pool, WORKER_GROUP, '-', '+', 100)) as [
    string,
    string,
    number,
    number,
  ][];
  const out: Record<string, string[]> = {};
  for (const [id, consumer] of rows) (out[consumer] ??= []).push(id);
  return out;
}

const strictEu = { region: 'eu', region_policy: 'strict' as const };

describe('a pull agent and the placement of pool tasks', () => {
  it('in region us never runs nor reports a strict-eu or a gpu-only pool task: it releases the entry unacknowledged and frees the slot at once', async () => {
    h = await startHarness();
    const ran: string[] = [];
    const agent = h.agent({
      channel: 'pull',
      capabilities: ['embed'],
      region: 'us',
      // One slot: the plain task after the two others runs only if their slots were freed.
      maxConcurrency: 1,
      handler: (t) => (ran.push(t.taskId), Promise.resolve(t.taskId)),
    });
    const reg = await agent.start().ready();
    expect(h.registry.registers[0]).toMatchObject({ region: 'us' });
    const pool = h.registry.keys.pool('embed');
    const eu = await h.addPoolTask('embed', { task_id: 'eu-only', ...strictEu });
    const gpu = await h.addPoolTask('embed', { task_id: 'gpu-only', tags: ['gpu'] });
    await h.addPoolTask('embed', { task_id: 'prefers-eu', region: 'eu', region_policy: 'prefer' });
    await h.addPoolTask('embed', { task_id: 'plain' });
    await h.waitForAcks('plain', 2);
    await h.waitForAcks('prefers-eu', 2);
    expect(ran.sort()).toEqual(['plain', 'prefers-eu']);
    expect(await h.acksOf('eu-only')).toEqual([]);
    expect(await h.acksOf('gpu-only')).toEqual([]);
    // Left pending in the group, unacknowledged, with the released consumer, not this one.
    const held = await waitFor(
      async () => {
        const byConsumer = await pendingByConsumer(h!, pool);
        const settled =
          Object.keys(byConsumer).length === 1 && byConsumer[RELEASED_CONSUMER]?.length === 2;
        return settled && byConsumer;
      },
      { message: 'only the released entries pending' },
    );
    expect(held).toEqual({ [RELEASED_CONSUMER]: [eu, gpu] });
    expect(await h.redis.xlen(pool)).toBe(4);
    await waitFor(() => agent.inflight === 0, { message: 'every slot free' });
    expect(agent.state).toBe('running');

    // Its own inbox is not checked: the router chose it.
    await h.addTask(reg.agent_id, { task_id: 'routed-here', capability: 'embed', ...strictEu });
    expect((await h.waitForAcks('routed-here', 2))[1]).toMatchObject({ stage: 'completed' });
  });

  it('in region eu with the tag runs them, reporting the pool entry', async () => {
    h = await startHarness();
    const ran: string[] = [];
    const agent = h.agent({
      channel: 'pull',
      capabilities: ['embed'],
      region: 'eu',
      tags: ['gpu'],
      maxConcurrency: 2,
      handler: (t) => (ran.push(t.taskId), Promise.resolve(t.taskId)),
    });
    await agent.start().ready();
    expect(h.registry.registers[0]).toMatchObject({ region: 'eu', tags: ['gpu'] });
    const eu = await h.addPoolTask('embed', { task_id: 'eu-only', ...strictEu, tags: ['gpu'] });
    expect((await h.waitForAcks('eu-only', 2))[1]).toMatchObject({
      stage: 'completed',
      result: '"eu-only"',
      pool: 'embed',
      message_id: eu,
    });
    expect(ran).toEqual(['eu-only']);
  });

  it('skips and acknowledges a pool entry whose placement cannot be read, as any malformed entry', async () => {
    h = await startHarness();
    const ran: string[] = [];
    const agent = h.agent({
      channel: 'pull',
      capabilities: ['embed'],
      handler: (t) => (ran.push(t.taskId), Promise.resolve(t.taskId)),
    });
    await agent.start().ready();
    const pool = h.registry.keys.pool('embed');
    await h.redis.xadd(
      pool,
      '*',
      ...['task_id', 'bad-tags', 'capability', 'embed', 'attempt', '1', 'tags', 'gpu'],
    );
    await h.addPoolTask('embed', { task_id: 'after' });
    await h.waitForAcks('after', 2);
    await waitFor(async () => Object.keys(await pendingByConsumer(h!, pool)).length === 0, {
      message: 'malformed entry acknowledged',
    });
    expect(ran).toEqual(['after']);
    expect(await h.acksOf('bad-tags')).toEqual([]);
  });
});
