import { describe, expect, it } from 'vitest';
import { decideAuth, isLoopbackHost } from './auth-mode.ts';

const admin = 'a'.repeat(64);

describe('isLoopbackHost', () => {
  it('knows loopback addresses from the others', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST'])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '', '10.0.0.5', '192.168.1.1', 'example.com', '128.0.0.1'])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('decideAuth', () => {
  const decide = (setting: 'auto' | 'off' | 'required', host: string, adminKey?: string) =>
    decideAuth({ service: 'router', setting, hosts: [host], adminKey });

  it('is open on loopback with auto or off, and says so loudly', () => {
    for (const setting of ['auto', 'off'] as const) {
      const d = decide(setting, '127.0.0.1');
      expect(d.required).toBe(false);
      expect(d.warning).toMatch(/AUTH IS OFF/);
    }
  });

  it('requires keys off loopback, and with required everywhere', () => {
    expect(decide('auto', '0.0.0.0', admin)).toEqual({ required: true });
    expect(decide('required', '10.1.2.3', admin)).toEqual({ required: true });
    expect(decide('required', '127.0.0.1', admin)).toEqual({ required: true });
    expect(decide('required', '127.0.0.1').required).toBe(true);
  });

  it('refuses a non-loopback host without REACH_ADMIN_KEY, whatever REACH_AUTH says', () => {
    expect(() => decide('auto', '0.0.0.0')).toThrow(/REACH_ADMIN_KEY must be set/);
    expect(() => decide('required', '::')).toThrow(/not a loopback address/);
  });

  it('refuses REACH_AUTH=off off loopback, even with an admin key', () => {
    expect(() => decide('off', '0.0.0.0', admin)).toThrow(
      /REACH_AUTH=off is allowed only on a loopback/,
    );
  });

  it('refuses an admin key shorter than 32 characters', () => {
    expect(() => decide('required', '127.0.0.1', 'short')).toThrow(/too short/);
  });
});
