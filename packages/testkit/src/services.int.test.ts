import { Cluster, Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freePort, isMissingBinaryError, startServices, testServices } from './index.ts';

afterEach(() => {
  vi.unstubAllEnvs();
});

async function query(influxUrl: string, db: string, q: string): Promise<unknown[][]> {
  const res = await fetch(`${influxUrl}/query?db=${db}&q=${encodeURIComponent(q)}`);
  const body = (await res.json()) as { results: { series?: { values: unknown[][] }[] }[] };
  return body.results[0]?.series?.[0]?.values ?? [];
}

describe('the services of this run', () => {
  it('has a Redis that answers PING', async () => {
    const redis = new Redis(testServices().redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });

  it('reads back points written through /write and through /api/v2/write', async () => {
    const { influxUrl, influxV2Url, influxBucket } = testServices();
    const run = `r${Date.now()}`;
    const v1 = await fetch(`${influxUrl}/write?db=${influxBucket}`, {
      method: 'POST',
      body: `testkit_probe,run=${run},path=v1 n=1i`,
    });
    expect(v1.status).toBe(204);
    const v2 = await fetch(
      `${influxV2Url}/api/v2/write?org=x&bucket=${influxBucket}&precision=ms`,
      {
        method: 'POST',
        headers: { Authorization: 'Token x', 'Content-Type': 'text/plain; charset=utf-8' },
        body: `testkit_probe,run=${run},path=v2 n=2i ${Date.now()}`,
      },
    );
    expect(v2.status).toBe(204);
    const rows = await query(
      influxUrl,
      influxBucket,
      `SELECT "path", n FROM testkit_probe WHERE run = '${run}'`,
    );
    expect(rows.map((r) => [r[1], r[2]]).sort()).toEqual([
      ['v1', 1],
      ['v2', 2],
    ]);
  });

  it('passes influx errors through the v2 proxy', async () => {
    const res = await fetch(`${testServices().influxV2Url}/api/v2/write?bucket=no_such_db`, {
      method: 'POST',
      body: 'testkit_probe n=1i',
    });
    expect(res.status).toBe(404);
  });
});

describe('startServices', () => {
  it('uses REDIS_URL and INFLUX_URL as given and stops nothing it did not start', async () => {
    const given = testServices();
    vi.stubEnv('REDIS_URL', given.redisUrl);
    vi.stubEnv('INFLUX_URL', given.influxUrl);
    vi.stubEnv('INFLUX_V2_URL', given.influxV2Url);
    const s = await startServices();
    expect(s).toMatchObject({
      redisUrl: given.redisUrl,
      influxUrl: given.influxUrl,
      influxV2Url: given.influxV2Url,
    });
    expect(s.redisPid).toBeUndefined();
    await s.stop();
    const redis = new Redis(given.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    expect(await redis.ping()).toBe('PONG');
    redis.disconnect();
  });

  it('starts a local redis-server and stops it', async () => {
    vi.stubEnv('REDIS_URL', '');
    vi.stubEnv('REACH_TESTKIT_LOCAL', '1');
    const s = await startServices({ influx: false });
    expect(s.redisPid).toBeGreaterThan(0);
    expect(s.influxUrl).toBe('');
    const redis = new Redis(s.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    expect(await redis.call('DEBUG', 'SLEEP', '0')).toBe('OK');
    redis.disconnect();
    await s.stop();
    expect(() => process.kill(s.redisPid!, 0)).toThrow();
  });

  it('on the cluster leg starts a 3-master Redis Cluster, and stops it', async () => {
    vi.stubEnv('REACH_TEST_REDIS', 'cluster');
    vi.stubEnv('REDIS_CLUSTER_NODES', '');
    const s = await startServices({ influx: false });
    const seeds = (s.redisClusterNodes ?? '').split(',');
    expect(seeds).toHaveLength(3);
    expect(s.redisUrl).toBe(`redis://${seeds[0]}`);
    const cluster = new Cluster(
      seeds.map((hp) => ({ host: '127.0.0.1', port: Number(hp.split(':')[1]) })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    );
    try {
      for (const tag of ['a', 'b', 'c', 'd']) await cluster.set(`{${tag}}:k`, tag);
      expect(await cluster.get('{c}:k')).toBe('c');
      const masters = cluster.nodes('master').length;
      expect(masters).toBe(3);
    } finally {
      cluster.disconnect();
    }
    await s.stop();
    const probe = new Redis(s.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    await expect(probe.connect()).rejects.toThrow();
    probe.disconnect();
  }, 60_000);

  it('on the cluster leg fails within 10 s naming REDIS_CLUSTER_NODES when no seed answers', async () => {
    vi.stubEnv('REACH_TEST_REDIS', 'cluster');
    const dead = `127.0.0.1:${await freePort()}`;
    vi.stubEnv('REDIS_CLUSTER_NODES', dead);
    const started = Date.now();
    await expect(startServices({ influx: false })).rejects.toThrow(
      `REDIS_CLUSTER_NODES=${dead}: no seed node accepts a connection`,
    );
    expect(Date.now() - started).toBeLessThan(12_000);
  }, 20_000);

  it('says what to install when a binary is missing', async () => {
    vi.stubEnv('REDIS_URL', '');
    vi.stubEnv('REACH_TESTKIT_LOCAL', '1');
    vi.stubEnv('PATH', '/nonexistent');
    const err: unknown = await startServices({ influx: false }).catch((e: unknown) => e);
    expect(isMissingBinaryError(err)).toBe(true);
    expect((err as Error).message).toContain('apt-get install redis-server influxdb nginx-light');
  });
});
