import { describe, expect, it } from 'vitest';
import { claimSubmission, Delivery } from '@agent-reach/dispatch';
import { watchdogMember } from '@agent-reach/protocol';
import { TaskReader } from '../tasks/task-reader.ts';
import { plainSpec } from '../testing/plain-spec.ts';
import { useScratchRedis } from '../testing/scratch-redis.ts';

const scratch = useScratchRedis();

describe('a claim another submission of its task_id was answered from', () => {
  it('is kept, with its watchdog entry, when the claiming submission finds no agent', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    const reader = new TaskReader({ redis, keys });
    const claim = claimSubmission(redis, keys, delivery, {
      task: plainSpec('seen-1'),
      nonce: 'first-try',
      timeoutMs: 0,
      watchdogAt: 1_000,
    });
    expect((await claim.take(undefined, '')).ok).toBe(true);
    // A second try of the task_id while the first is still being sent: 200 with the task.
    expect((await reader.submitView('seen-1'))?.status).toBe('accepted');
    // The first try finds no agent and gives its claim back — which must not drop the task the
    // second caller was told of.
    await claim.release();
    expect(await redis.hget(keys.task('seen-1'), 'status')).toBe('accepted');
    expect(await redis.zscore(keys.dueOf('seen-1'), watchdogMember('seen-1'))).toBe('1000');
  });

  it('is given back as before when nobody else was answered from it', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    const reader = new TaskReader({ redis, keys });
    const claim = claimSubmission(redis, keys, delivery, {
      task: plainSpec('unseen-1'),
      nonce: 'only-try',
      timeoutMs: 0,
      watchdogAt: 1_000,
    });
    expect((await claim.take(undefined, '')).ok).toBe(true);
    await claim.release();
    expect(await redis.exists(keys.task('unseen-1'))).toBe(0);
    expect(await redis.zscore(keys.dueOf('unseen-1'), watchdogMember('unseen-1'))).toBeNull();
    // A later try finds nothing, and makes the task anew.
    expect(await reader.submitView('unseen-1')).toBeUndefined();
  });
});
