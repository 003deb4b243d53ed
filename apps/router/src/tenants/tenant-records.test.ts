/**
 * The cache of tenant records: a read per tenant per cacheMs whatever the submissions, one read
 * for a burst on a cold cache, and a put seen at once by its own process.
 */
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { reachKeys } from '@agent-reach/protocol';
import { TenantRecords } from './tenant-records.ts';

/** Answers HGETALL from `hashes`, counting the reads. */
function fakeRedis(hashes: Map<string, Record<string, string>>) {
  const fake = {
    reads: 0,
    hgetall: async (key: string) => {
      fake.reads++;
      await Promise.resolve();
      return { ...(hashes.get(key) ?? {}) };
    },
  };
  return fake;
}

const keys = reachKeys('t');

describe('TenantRecords.get', () => {
  it('reads a tenant once per cacheMs, a burst on a cold cache included', async () => {
    let now = 1000;
    const hashes = new Map([[keys.tenant('acme'), { weight: '2' }]]);
    const redis = fakeRedis(hashes);
    const records = new TenantRecords({
      redis: redis as unknown as RedisClient,
      keys,
      cacheMs: 1000,
      now: () => now,
    });
    const burst = await Promise.all(Array.from({ length: 50 }, () => records.get('acme')));
    expect(burst.every((v) => v.weight === 2)).toBe(true);
    expect(redis.reads).toBe(1);
    hashes.set(keys.tenant('acme'), { weight: '3' });
    now += 999;
    expect((await records.get('acme')).weight).toBe(2);
    expect(redis.reads).toBe(1);
    now += 1;
    expect((await records.get('acme')).weight).toBe(3);
    expect(redis.reads).toBe(2);
  });

  it('gives the defaults for a tenant with no record, and caches them too', async () => {
    const redis = fakeRedis(new Map());
    const records = new TenantRecords({ redis: redis as unknown as RedisClient, keys });
    expect(await records.get('globex')).toMatchObject({ weight: 1, max_fairness_weight: 10 });
    await records.get('globex');
    expect(redis.reads).toBe(1);
  });

  it('keeps a put made while a read was out over what the read saw', async () => {
    const hashes = new Map<string, Record<string, string>>([
      [keys.tenant('acme'), { weight: '2' }],
    ]);
    let release = () => {};
    const redis = {
      hgetall: async (key: string) => {
        const seen = { ...(hashes.get(key) ?? {}) };
        await new Promise<void>((resolve) => (release = resolve));
        return seen;
      },
      multi: () => {
        const chain = {
          hset: (key: string, fields: Record<string, string>) => {
            hashes.set(key, { ...(hashes.get(key) ?? {}), ...fields });
            return chain;
          },
          sadd: () => chain,
          hgetall: () => chain,
          exec: async () => [
            [null, 1],
            [null, 1],
            [null, { ...(hashes.get(keys.tenant('acme')) ?? {}) }],
          ],
        };
        return chain;
      },
    };
    const records = new TenantRecords({ redis: redis as unknown as RedisClient, keys });
    const before = records.get('acme');
    expect((await records.put('acme', { weight: 5 })).weight).toBe(5);
    release();
    expect((await before).weight).toBe(5);
    expect((await records.get('acme')).weight).toBe(5);
  });

  it('refuses a name that is no tenant’s', async () => {
    const records = new TenantRecords({
      redis: fakeRedis(new Map()) as unknown as RedisClient,
      keys,
    });
    await expect(records.get('No Tenant')).rejects.toThrow(TypeError);
  });
});
