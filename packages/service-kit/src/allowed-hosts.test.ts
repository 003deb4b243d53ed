import { describe, expect, it } from 'vitest';
import {
  checkOutboundUrl,
  hostListFrom,
  isAllowedHost,
  outboundLoopbackAllowed,
} from './allowed-hosts.ts';

const LOOPBACK = ['localhost', 'LocalHost', '127.0.0.1', '127.9.9.9', '[::1]'];
const ELSEWHERE = ['example.com', '10.0.0.1', '169.254.169.254', 'hooks.example.com.evil.io'];

describe('isAllowedHost', () => {
  it('allows the listed hosts, and loopback only when told to', () => {
    const hosts = ['hooks.example.com'];
    for (const h of [...LOOPBACK, 'Hooks.Example.com'])
      expect(isAllowedHost(h, { hosts, loopback: true }), h).toBe(true);
    for (const h of LOOPBACK) expect(isAllowedHost(h, { hosts, loopback: false }), h).toBe(false);
    expect(isAllowedHost('Hooks.Example.com', { hosts, loopback: false })).toBe(true);
    for (const h of ELSEWHERE)
      for (const loopback of [true, false])
        expect(isAllowedHost(h, { hosts, loopback }), h).toBe(false);
  });

  it('a loopback host listed by name is allowed without loopback', () => {
    expect(isAllowedHost('127.0.0.1', { hosts: ['127.0.0.1'], loopback: false })).toBe(true);
    expect(isAllowedHost('localhost', { hosts: ['127.0.0.1'], loopback: false })).toBe(false);
  });
});

describe('checkOutboundUrl', () => {
  const closed = { hosts: ['cards.example.com'], loopback: false };

  it('refuses every loopback URL alike while loopback is not allowed, whatever port or path', () => {
    for (const text of [
      'http://127.0.0.1:6379/',
      'http://127.0.0.1:1/card.json',
      'http://localhost:4000/healthz',
      'http://[::1]:4001/v1/agents',
      // The URL parser's other spellings of 127.0.0.1.
      'http://2130706433/',
      'http://0x7f.1/',
    ])
      expect(checkOutboundUrl(text, closed), text).toMatchObject({ problem: 'host' });
    expect(checkOutboundUrl('http://127.0.0.1:1/', { hosts: [], loopback: true })).toHaveProperty(
      'url',
    );
  });

  it('names what else is wrong before the host', () => {
    expect(checkOutboundUrl('not a url', closed)).toEqual({ problem: 'not_url' });
    expect(checkOutboundUrl('ftp://cards.example.com/x', closed)).toEqual({
      problem: 'not_http',
    });
    expect(checkOutboundUrl('https://u:p@cards.example.com/x', closed)).toEqual({
      problem: 'credentials',
    });
    expect(checkOutboundUrl('https://other.example.com/x', closed)).toEqual({
      problem: 'host',
      host: 'other.example.com',
    });
    const ok = checkOutboundUrl('https://Cards.Example.com/agent.json', closed);
    expect('url' in ok && ok.url.href).toBe('https://cards.example.com/agent.json');
  });
});

describe('outboundLoopbackAllowed', () => {
  it('auto: only while auth is off; on and off whatever auth is', () => {
    expect(outboundLoopbackAllowed('auto', false)).toBe(true);
    expect(outboundLoopbackAllowed('auto', true)).toBe(false);
    expect(outboundLoopbackAllowed('on', true)).toBe(true);
    expect(outboundLoopbackAllowed('off', false)).toBe(false);
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
