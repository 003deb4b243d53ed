import { describe, expect, it } from 'vitest';
import { SHARED_DEFAULTS } from '@agent-reach/protocol';
import { compileRegistryOptions, optionsFromEnv, REGISTRY_DEFAULTS } from './options.ts';

describe('registry-sync options', () => {
  it('keeps the documented defaults', () => {
    expect(compileRegistryOptions()).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      auth: 'auto',
      redisUrl: 'redis://127.0.0.1:6379',
      prefix: 'reach',
      heartbeatIntervalMs: 5000,
      suspectMs: 15000,
      offlineMs: 30000,
      snapshotIntervalMs: 5000,
      sweepIntervalMs: 1000,
      taskRetentionS: 86400,
      callbackRetentionS: 604800,
      callbackMaxLen: 100000,
      shards: 1,
      taskShards: 1,
      bodyLimitBytes: 65536,
      instanceId: `sync-${process.pid}`,
      maxAttempts: 4,
      retryBaseMs: 2000,
      retryCapMs: 120000,
      receiptTimeoutMs: 30000,
      consumeBoundMs: 10000,
      probeIntervalMs: 10000,
      slowMs: 3000,
      slowMsByCapability: {},
      slowStreak: 5,
      ejectS: 30,
      ejectMaxShare: 0.5,
      dlqRetentionS: 604800,
      dispatchGraceMs: 10000,
      noAgentWaitMs: 300000,
      watermark: 0.85,
      logLevel: 'info',
    });
  });

  it('takes the settings both services read from SHARED_DEFAULTS', () => {
    expect(REGISTRY_DEFAULTS).toMatchObject(SHARED_DEFAULTS);
  });

  it('returns only the variables that are set, so compile fills in the same defaults', () => {
    expect(optionsFromEnv({})).toEqual({});
    expect(compileRegistryOptions(optionsFromEnv({}))).toEqual(compileRegistryOptions());
    expect(
      optionsFromEnv({
        REACH_OFFLINE_MS: '600',
        REACH_WATERMARK: '0.5',
        REACH_SLOW_MS_BY_CAPABILITY: '{"summarise": 20000}',
        REACH_INSTANCE_ID: 'sync-a',
      }),
    ).toEqual({
      offlineMs: 600,
      watermark: 0.5,
      slowMsByCapability: { summarise: 20000 },
      instanceId: 'sync-a',
    });
  });

  it('reads on/off, JSON maps and host lists, and ignores the router’s variables', () => {
    expect(
      optionsFromEnv({
        REACH_AGENT_ACL: 'on',
        REACH_EXEC_LEASE_MS_BY_CAPABILITY: '{"render": 300000}',
        REACH_EJECT_MAX_SHARE: '0',
        ROUTER_PORT: '9000',
        REACH_BACKPRESSURE: 'not json',
      }),
    ).toEqual({ agentAcl: true, execLeaseMsByCapability: { render: 300000 }, ejectMaxShare: 0 });
    expect(optionsFromEnv({ REACH_AGENT_ACL: 'off' })).toEqual({ agentAcl: false });
  });

  it('hands out defaults that callers may change, and has no variable for slowStreak', () => {
    const first = compileRegistryOptions();
    first.cardHosts.push('changed.example');
    first.slowMsByCapability.x = 1;
    expect(compileRegistryOptions()).toMatchObject({ cardHosts: [], slowMsByCapability: {} });
    expect(REGISTRY_DEFAULTS.slowStreak).toBe(5);
    expect(compileRegistryOptions(optionsFromEnv({ REACH_SLOW_STREAK: '9' })).slowStreak).toBe(5);
  });

  it.each([
    [{ REACH_AGENT_ACL: 'yes' }, /REACH_AGENT_ACL/],
    [{ REACH_INSTANCE_ID: '' }, /REACH_INSTANCE_ID/],
    [
      { REACH_EXEC_LEASE_MS_BY_CAPABILITY: '{"render": 0}' },
      /REACH_EXEC_LEASE_MS_BY_CAPABILITY.render/,
    ],
    [{ REACH_HEALTH_WINDOW: '1001' }, /REACH_HEALTH_WINDOW must be <= 1000/],
    [{ REACH_OFFLINE_MS: '100' }, /REACH_OFFLINE_MS/],
    [{ REACH_WATERMARK: '0' }, /REACH_WATERMARK/],
    [{ REACH_SLOW_MS_BY_CAPABILITY: '[1]' }, /REACH_SLOW_MS_BY_CAPABILITY/],
  ])('names the bad variable in %j', (env, message) => {
    expect(() => optionsFromEnv(env)).toThrow(message);
  });

  it('checks the lease bounds', () => {
    expect(() => compileRegistryOptions({ suspectMs: 40_000 })).toThrow(/REACH_SUSPECT_MS/);
  });
});

describe('AgentCard fetch settings', () => {
  it('default to loopback only, 3 s and 64 KiB', () => {
    expect(compileRegistryOptions()).toMatchObject({
      cardHosts: [],
      cardTimeoutMs: 3000,
      cardMaxBytes: 65536,
    });
  });

  it('read REACH_CARD_HOSTS as lower-cased host names and refuse a URL or a port', () => {
    expect(
      optionsFromEnv({ REACH_CARD_HOSTS: ' Cards.Example.com, agents.internal ,' }).cardHosts,
    ).toEqual(['cards.example.com', 'agents.internal']);
    expect(() => optionsFromEnv({ REACH_CARD_HOSTS: 'https://cards.example.com' })).toThrow(
      /REACH_CARD_HOSTS/,
    );
    expect(() => optionsFromEnv({ REACH_CARD_HOSTS: 'cards.example.com:8443' })).toThrow(
      /REACH_CARD_HOSTS/,
    );
    expect(() => optionsFromEnv({ REACH_CARD_TIMEOUT_MS: '10' })).toThrow(/REACH_CARD_TIMEOUT_MS/);
  });
});
