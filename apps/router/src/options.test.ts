import { describe, expect, it } from 'vitest';
import { SHARED_DEFAULTS } from '@agent-reach/protocol';
import { compileRouterOptions, optionsFromEnv, ROUTER_DEFAULTS } from './options.ts';

describe('router options', () => {
  it('keeps the documented defaults', () => {
    expect(compileRouterOptions()).toEqual({
      port: 8081,
      host: '127.0.0.1',
      auth: 'auto',
      redisUrl: 'redis://127.0.0.1:6379',
      prefix: 'reach',
      offlineMs: 30000,
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
      timelineLookback: '30d',
      storeTimeoutMs: 800,
      watermark: 0.85,
      backpressure: {},
      sessionTtlS: 3600,
      admissionWaitMs: 200,
      poolWaitMs: 300000,
      keyRatePerS: 0,
      keyMaxInflight: 0,
      a2aPushHosts: [],
      logLevel: 'info',
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

  it.each([
    [{ REACH_OFFLINE_MS: 'soon' }, /REACH_OFFLINE_MS/],
    [{ ROUTER_PORT: '70000' }, /ROUTER_PORT/],
    [{ REACH_PREFIX: 'a b' }, /REACH_PREFIX/],
    [{ REACH_BACKPRESSURE: '{"embed": "drop"}' }, /REACH_BACKPRESSURE/],
    [{ REACH_CHILD_MARGIN_MS: '-1' }, /REACH_CHILD_MARGIN_MS/],
    [{ REACH_A2A_PUSH_HOSTS: 'https://hooks.example.com' }, /REACH_A2A_PUSH_HOSTS/],
  ])('names the bad variable in %j', (env, message) => {
    expect(() => optionsFromEnv(env)).toThrow(message);
  });
});
