import { describe, expect, it } from 'vitest';
import { compileRelayOptions, optionsFromEnv } from './options.ts';

describe('relay settings', () => {
  it('fills defaults and names the relay', () => {
    const o = compileRelayOptions(optionsFromEnv({}));
    expect(o.port).toBe(8082);
    expect(o.leaseMs).toBe(10_000);
    expect(o.probeIntervalMs).toBe(500);
    expect(o.relayId).toMatch(/^relay-\d+-[0-9a-f]{6}$/);
  });

  it('refuses a registry URL that is not http(s), naming the variable', () => {
    expect(() =>
      compileRelayOptions(optionsFromEnv({ REACH_RELAY_REGISTRY_URL: 'registry-sync' })),
    ).toThrow(/REACH_RELAY_REGISTRY_URL/);
  });

  it('refuses a full check more often than the probe', () => {
    expect(() =>
      compileRelayOptions(
        optionsFromEnv({ REACH_ENDPOINT_PROBE_MS: '1000', REACH_ENDPOINT_CHECK_MS: '500' }),
      ),
    ).toThrow(/REACH_ENDPOINT_CHECK_MS/);
  });
});
