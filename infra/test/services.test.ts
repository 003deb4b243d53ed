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
  });
});
