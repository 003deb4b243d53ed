import { describe, expect, it } from 'vitest';
import { SHARED_DEFAULTS } from '@agent-reach/protocol';
import { compileRouterOptions, optionsFromEnv, ROUTER_DEFAULTS } from './options.ts';

describe('router options', () => {
  it('keeps the documented defaults', () => {
    expect(compileRouterOptions()).toEqual({
      port: 8081,
      host: '127.0.0.1',
      auth: 'auto',
      allowedHosts: [],
      allowedOrigins: [],
      trustedProxies: [],
      authFailureLimit: 20,
      authFailureWindowS: 60,
      redisUrl: 'redis://127.0.0.1:6379',
      prefix: 'reach',
      offlineMs: 30000,
      deliveryLeaseMs: 600000,
      shadowRate: 0,
      snapshotIntervalMs: 5000,
      maxPayloadBytes: 1048576,
      defaultTimeoutS: 0,
      maxCandidates: 3,
      callbackConnections: 64,
      eventsConnections: 16,
      maxHops: 10,
      childMarginMs: 5000,
      dispatchGraceMs: 10000,
      dlqRetentionS: 604800,
      callbackRetentionS: 604800,
      callbackMaxLen: 100000,
      shards: 1,
      taskShards: 1,
      timelineLookback: '30d',
      storeTimeoutMs: 800,
      watermark: 0.85,
      backpressure: {},
      sessionTtlS: 3600,
      admissionWaitMs: 200,
      poolWaitMs: 300000,
      queueDeadlineS: 300,
      queueDeadlines: {},
      queueMax: 100_000,
      queueMaxPerTenant: 10_000,
      keyRatePerS: 0,
      keyMaxInflight: 0,
      a2aPushHosts: [],
      searchScanMax: 20_000,
      searchArchiveMax: 10_000,
      webhookHosts: [],
      webhookRetrySchedule: [
        5000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
        36_000_000,
      ],
      webhookTimeoutMs: 10_000,
      webhookSecretGraceS: 86_400,
      webhookFailureRetentionS: 604_800,
      taskArchive: 'auto',
      taskRetentionS: 86_400,
      archiveTombstoneDays: 30,
      logLevel: 'info',
      outboundLoopback: 'auto',
    });
  });

  it('takes the settings both services read from SHARED_DEFAULTS', () => {
    expect(ROUTER_DEFAULTS).toMatchObject(SHARED_DEFAULTS);
  });

  it('returns only the variables that are set, so compile fills in the same defaults', () => {
    expect(optionsFromEnv({})).toEqual({});
    expect(compileRouterOptions(optionsFromEnv({}))).toEqual(compileRouterOptions());
    expect(
      optionsFromEnv({ REACH_OFFLINE_MS: '600', REACH_BACKPRESSURE: '{"embed": "queue"}' }),
    ).toEqual({ offlineMs: 600, backpressure: { embed: 'queue' } });
    expect(optionsFromEnv({ REACH_A2A_PUSH_HOSTS: 'Hooks.Example.com, ci.internal' })).toEqual({
      a2aPushHosts: ['hooks.example.com', 'ci.internal'],
    });
  });

  it('reads only the environment it is given, and hands out defaults that callers may change', () => {
    const before = process.env.REACH_MAX_HOPS;
    process.env.REACH_MAX_HOPS = '3';
    try {
      expect(optionsFromEnv({})).toEqual({});
    } finally {
      if (before === undefined) delete process.env.REACH_MAX_HOPS;
      else process.env.REACH_MAX_HOPS = before;
    }
    const first = compileRouterOptions();
    first.a2aPushHosts.push('changed.example');
    first.backpressure.embed = 'queue';
    expect(compileRouterOptions()).toMatchObject({ a2aPushHosts: [], backpressure: {} });
    expect(ROUTER_DEFAULTS.a2aPushHosts).toEqual([]);
  });

  it('reads the variables of every kind the tables hold, and ignores registry-sync’s', () => {
    expect(
      optionsFromEnv({
        REACH_AUTH: 'required',
        REACH_WATERMARK: '0.5',
        REACH_TIMELINE_LOOKBACK: '12h',
        REACH_ADMIN_KEY: 'k'.repeat(32),
        REDIS_USERNAME: 'reach',
        REACH_HEARTBEAT_MS: '100',
        REACH_AGENT_ACL: 'on',
      }),
    ).toEqual({
      auth: 'required',
      watermark: 0.5,
      timelineLookback: '12h',
      adminKey: 'k'.repeat(32),
      redisConnection: { username: 'reach' },
    });
  });

  it('names every bad variable, the shared ones first', () => {
    expect(() =>
      optionsFromEnv({ ROUTER_PORT: '-4', REACH_OFFLINE_MS: 'x', REACH_PREFIX: 'a b' }),
    ).toThrow(
      'env/REACH_PREFIX must match pattern "^[A-Za-z0-9_.:-]{1,64}$", env/REACH_OFFLINE_MS must be integer, env/ROUTER_PORT must be >= 0',
    );
  });

  it.each([
    [{ REACH_OFFLINE_MS: 'soon' }, /REACH_OFFLINE_MS/],
    [{ REACH_OFFLINE_MS: '' }, /REACH_OFFLINE_MS must be integer/],
    [{ REACH_AUTH: 'sometimes' }, /REACH_AUTH/],
    [{ REACH_ADMIN_KEY: '' }, /REACH_ADMIN_KEY/],
    [{ REACH_WATERMARK: '0' }, /REACH_WATERMARK must be > 0/],
    [{ REACH_EVENTS_CONNECTIONS: '10001' }, /REACH_EVENTS_CONNECTIONS must be <= 10000/],
    [{ REACH_TIMELINE_LOOKBACK: '30 days' }, /REACH_TIMELINE_LOOKBACK/],
    [{ REACH_BACKPRESSURE: 'queue' }, /REACH_BACKPRESSURE must be a JSON object/],
    [{ ROUTER_PORT: '70000' }, /ROUTER_PORT/],
    [{ REACH_PREFIX: 'a b' }, /REACH_PREFIX/],
    [{ REACH_BACKPRESSURE: '{"embed": "drop"}' }, /REACH_BACKPRESSURE/],
    [{ REACH_CHILD_MARGIN_MS: '-1' }, /REACH_CHILD_MARGIN_MS/],
    [{ REACH_A2A_PUSH_HOSTS: 'https://hooks.example.com' }, /REACH_A2A_PUSH_HOSTS/],
  ])('names the bad variable in %j', (env, message) => {
    expect(() => optionsFromEnv(env)).toThrow(message);
  });
});
