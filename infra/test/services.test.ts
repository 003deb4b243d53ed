import { describe, expect, it } from 'vitest';
import { builtEntry, portOf, roleOf, unreadVariables } from './services.ts';

// The checks the deployment tests rest on, checked themselves.
describe('the settings check', () => {
  it('finds a misspelt variable, one of the other service, and a value the service refuses', () => {
    expect(unreadVariables('router', { LOG_LEVEL: 'info', INFLUX_TOKEN: 't' })).toEqual([]);
    const bad = unreadVariables('router', {
      REDIS_URLS: 'redis://x',
      REGISTRY_PORT: '8080',
      ROUTER_PORT: 'eighty',
    });
    expect(bad).toHaveLength(3);
    expect(bad[0]).toMatch(/^REDIS_URLS: not a setting of router/);
    expect(bad[1]).toMatch(/^REGISTRY_PORT: not a setting of router/);
    expect(bad[2]).toMatch(/^ROUTER_PORT=eighty: /);
  });

  it('knows each service by its built entry and its default port', () => {
    expect(builtEntry('router')).toBe('apps/router/dist/server.js');
    expect(roleOf(['apps/registry-sync/dist/server.js'])).toBe('registry-sync');
    expect(roleOf(['apps/registry-sync/src/server.ts'])).toBeUndefined();
    expect(portOf('router')).toBe(8081);
    expect(portOf('registry-sync', { REGISTRY_PORT: '9000' })).toBe(9000);
    expect(roleOf(['apps/relay/dist/server.js'])).toBe('relay');
    expect(portOf('relay')).toBe(8082);
  });

  it('holds the relay to its own settings: no API keys checked, no events written', () => {
    expect(
      unreadVariables('relay', {
        REDIS_URL: 'redis://x',
        RELAY_PORT: '8082',
        REACH_RELAY_REGISTRY_URL: 'http://registry-sync:8080',
        REACH_RELAY_KEY: 'k',
      }),
    ).toEqual([]);
    const bad = unreadVariables('relay', {
      REACH_AUTH: 'required',
      REACH_ADMIN_KEY: 'f'.repeat(64),
      INFLUX_TOKEN: 't',
      REACH_RELAY_KEY: '',
    });
    expect(bad).toHaveLength(4);
    expect(bad.slice(0, 3)).toEqual([
      'REACH_AUTH: not a setting of relay',
      'REACH_ADMIN_KEY: not a setting of relay',
      'INFLUX_TOKEN: not a setting of relay',
    ]);
    expect(bad[3]).toMatch(/^REACH_RELAY_KEY=: /);
  });
});
