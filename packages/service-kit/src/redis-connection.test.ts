import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  clusterOptionsFor,
  describeRedis,
  parseSentinels,
  redactUrl,
  redisExtrasFromEnv,
  redisOptionsFor,
} from './redis-connection.ts';

describe('redisExtrasFromEnv', () => {
  it('is undefined when nothing is set, and reads every variable', () => {
    expect(redisExtrasFromEnv({ REDIS_URL: 'redis://x' })).toBeUndefined();
    expect(
      redisExtrasFromEnv({
        REDIS_TLS_CA: '/ca.pem',
        REDIS_TLS_CERT: '/c.pem',
        REDIS_TLS_KEY: '/k.pem',
        REDIS_USERNAME: 'svc',
        REDIS_PASSWORD: 'pw',
        REDIS_SENTINELS: 's1:26379, [::1]:26380',
        REDIS_SENTINEL_NAME: 'reach',
      }),
    ).toEqual({
      tlsCaFile: '/ca.pem',
      tlsCertFile: '/c.pem',
      tlsKeyFile: '/k.pem',
      username: 'svc',
      password: 'pw',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      sentinelName: 'reach',
    });
  });

  it('names the variable that is wrong', () => {
    expect(() => redisExtrasFromEnv({ REDIS_TLS_CERT: '/c.pem' })).toThrow(/REDIS_TLS_KEY/);
    expect(() => parseSentinels('s1')).toThrow(/REDIS_SENTINELS/);
    expect(() => parseSentinels('s1:99999')).toThrow(/REDIS_SENTINELS/);
  });
});

describe('redisOptionsFor', () => {
  it('takes host, port, database and credentials from the URL', () => {
    expect(redisOptionsFor({ url: 'redis://u%40x:p%2Fw@h:6380/3' })).toEqual({
      host: 'h',
      port: 6380,
      db: 3,
      username: 'u@x',
      password: 'p/w',
    });
    expect(redisOptionsFor({ url: 'redis://127.0.0.1' })).toEqual({
      host: '127.0.0.1',
      port: 6379,
    });
  });

  it('takes a Unix socket path', () => {
    expect(redisOptionsFor({ url: '/run/redis.sock', password: 'pw' })).toEqual({
      path: '/run/redis.sock',
      password: 'pw',
    });
  });

  it('lets REDIS_USERNAME/REDIS_PASSWORD win over the URL, and overrides over both', () => {
    const settings = { url: 'redis://a:b@h:1', username: 'env', password: 'envpw' };
    expect(redisOptionsFor(settings)).toMatchObject({ username: 'env', password: 'envpw' });
    expect(
      redisOptionsFor(settings, { username: 'issued', password: 'secret', lazyConnect: true }),
    ).toMatchObject({ username: 'issued', password: 'secret', lazyConnect: true });
  });

  it('reads the TLS files for rediss:// and refuses them with redis://', () => {
    const dir = mkdtempSync(join(tmpdir(), 'reach-tls-'));
    for (const f of ['ca', 'cert', 'key']) writeFileSync(join(dir, `${f}.pem`), `${f}-pem`);
    const files = {
      tlsCaFile: join(dir, 'ca.pem'),
      tlsCertFile: join(dir, 'cert.pem'),
      tlsKeyFile: join(dir, 'key.pem'),
    };
    const tls = redisOptionsFor({ url: 'rediss://h:6390', ...files }).tls as Record<string, Buffer>;
    expect(tls['ca']?.toString()).toBe('ca-pem');
    expect(tls['cert']?.toString()).toBe('cert-pem');
    expect(tls['key']?.toString()).toBe('key-pem');
    expect(redisOptionsFor({ url: 'rediss://h' }).tls).toEqual({});
    expect(() => redisOptionsFor({ url: 'redis://h', ...files })).toThrow(/rediss:\/\//);
    expect(() => redisOptionsFor({ url: 'rediss://h', tlsCaFile: join(dir, 'none.pem') })).toThrow(
      /REDIS_TLS_CA=.*none\.pem cannot be read \(ENOENT\)/,
    );
  });

  it('asks sentinels for the master, with TLS to both when the URL is rediss://', () => {
    const sentinels = [{ host: 's1', port: 26379 }];
    expect(redisOptionsFor({ url: 'redis://:pw@ignored:1/2', sentinels })).toEqual({
      sentinels,
      name: 'mymaster',
      password: 'pw',
      db: 2,
    });
    expect(
      redisOptionsFor({ url: 'rediss://ignored', sentinels, sentinelName: 'reach' }),
    ).toMatchObject({ name: 'reach', tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true });
  });

  it('refuses other schemes and hides passwords in its messages', () => {
    expect(() => redisOptionsFor({ url: 'http://h' })).toThrow(/redis:\/\/ or rediss:\/\//);
    expect(() => redisOptionsFor({ url: 'not a url :secret@' })).toThrow(/not a URL/);
    expect(redactUrl('rediss://user:secret@h:1')).toBe('rediss://user:***@h:1');
  });
});

describe('REDIS_CLUSTER_NODES', () => {
  it('is read and named when wrong', () => {
    expect(redisExtrasFromEnv({ REDIS_CLUSTER_NODES: 'a:7000, b:7001' })).toEqual({
      clusterNodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
      ],
    });
    expect(() => redisExtrasFromEnv({ REDIS_CLUSTER_NODES: 'a' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() =>
      redisExtrasFromEnv({ REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 'b:2' }),
    ).toThrow(/exclude/);
  });

  it('gives the Cluster client its own options and each node the rest', () => {
    const retry = (times: number) => times * 10;
    const options = clusterOptionsFor(
      {
        url: 'redis://u:p@ignored:1',
        clusterNodes: [{ host: '127.0.0.1', port: 7000 }],
        password: 'pw',
      },
      {
        lazyConnect: true,
        enableAutoPipelining: true,
        maxRetriesPerRequest: 1,
        retryStrategy: retry,
      },
    );
    expect(options).toMatchObject({
      scaleReads: 'master',
      lazyConnect: true,
      // Never on a Cluster: ioredis refuses a batch whose slot map moved (see clusterOptionsFor).
      enableAutoPipelining: false,
      redisOptions: { username: 'u', password: 'pw', maxRetriesPerRequest: 1 },
    });
    expect(options.redisOptions).not.toHaveProperty('host');
    expect(options.redisOptions).not.toHaveProperty('lazyConnect');
    expect(options.clusterRetryStrategy?.(3)).toBe(30);
    expect(() =>
      clusterOptionsFor({ url: 'redis://h/2', clusterNodes: [{ host: 'h', port: 1 }] }),
    ).toThrow(/database/);
  });

  it('names the address to reach', () => {
    expect(describeRedis({ url: 'redis://x', clusterNodes: [{ host: '::1', port: 7000 }] })).toBe(
      'REDIS_CLUSTER_NODES=[::1]:7000',
    );
    expect(describeRedis({ url: 'redis://u:secret@h:1' })).toBe('REDIS_URL=redis://u:***@h:1');
  });
});
