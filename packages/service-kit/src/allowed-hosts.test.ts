import { describe, expect, it } from 'vitest';
import { hostListFrom, isAllowedHost } from './allowed-hosts.ts';

describe('isAllowedHost', () => {
  it('allows loopback and the listed hosts only', () => {
    for (const h of ['localhost', '127.0.0.1', '127.9.9.9', '[::1]', 'Hooks.Example.com'])
      expect(isAllowedHost(h, ['hooks.example.com']), h).toBe(true);
    for (const h of ['example.com', '10.0.0.1', '169.254.169.254', 'hooks.example.com.evil.io'])
      expect(isAllowedHost(h, ['hooks.example.com']), h).toBe(false);
  });
});

describe('hostListFrom', () => {
  it('reads lower-cased host names and refuses a URL or a port, naming the setting', () => {
    expect(hostListFrom(' Hooks.Example.com, agents.internal ,', 'X_HOSTS')).toEqual([
      'hooks.example.com',
      'agents.internal',
    ]);
    expect(() => hostListFrom('https://hooks.example.com', 'X_HOSTS')).toThrow(/X_HOSTS/);
    expect(() => hostListFrom('hooks.example.com:8443', 'X_HOSTS')).toThrow(/X_HOSTS/);
  });
});
