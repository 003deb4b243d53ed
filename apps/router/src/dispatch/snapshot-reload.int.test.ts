import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { SnapshotHolder } from '@agent-reach/dispatch';
import { useScratchRedis } from '../testing/scratch-redis.ts';

const scratch = useScratchRedis();

const snapshotText = (version: number, agentIds: string[]) =>
  JSON.stringify({
    version,
    written_at: Date.now(),
    agents: agentIds.map((agent_id) => ({
      agent_id,
      status: 'HEALTHY',
      capabilities: ['echo'],
      max_concurrency: 2,
      inflight: 0,
      epoch: 1,
      instance_id: 'i',
      region: '',
      channel: 'push',
      lease_age_ms: 0,
    })),
  });

describe('reloading the snapshot', () => {
  it('reads the snapshot itself only when its version counter moved', async () => {
    const { redis, keys } = scratch;
    await redis.set(keys.snapshot(), snapshotText(3, ['a']));
    await redis.set(keys.snapshotVersion(), 3);
    const holder = new SnapshotHolder(redis, redis, keys, 60_000, pino({ level: 'silent' }));
    await holder.reload();
    expect(holder.info()).toMatchObject({ version: 3, agents: 1 });

    // A snapshot string the counter does not announce is not read: the counter is what a reload checks.
    await redis.set(keys.snapshot(), snapshotText(4, ['a', 'b']));
    await holder.reload();
    expect(holder.info()).toMatchObject({ version: 3, agents: 1 });

    // The writer moves both together (snapshot-2.lua): the next reload reads it.
    await redis.incr(keys.snapshotVersion());
    await holder.reload();
    expect(holder.info()).toMatchObject({ version: 4, agents: 2 });
    expect(holder.agentsFor('echo').map((a) => a.agent_id)).toEqual(['a', 'b']);
  });
});
