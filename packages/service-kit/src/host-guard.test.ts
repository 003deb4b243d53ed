import { describe, expect, it } from 'vitest';
import { checkHostAndOrigin, hostNameOf } from './host-guard.ts';

const open = { open: true, allowedHosts: [], allowedOrigins: [] };
const keyed = { open: false, allowedHosts: [], allowedOrigins: [] };

describe('hostNameOf', () => {
  it('takes the name out of a Host header with or without port and brackets', () => {
    expect(hostNameOf('127.0.0.1:8081')).toBe('127.0.0.1');
    expect(hostNameOf('LocalHost')).toBe('localhost');
    expect(hostNameOf('[::1]:8081')).toBe('::1');
    expect(hostNameOf('evil.example.com:80')).toBe('evil.example.com');
    expect(hostNameOf('::1')).toBeUndefined();
    expect(hostNameOf('')).toBeUndefined();
  });
});

describe('a keyless service (open on loopback)', () => {
  it('answers loopback hosts and origins', () => {
    for (const host of ['127.0.0.1:8081', 'localhost:8081', '[::1]:8081', 'localhost'])
      expect(checkHostAndOrigin(host, `http://${host}`, open)).toBeUndefined();
    expect(checkHostAndOrigin('127.0.0.1:8081', undefined, open)).toBeUndefined();
    // HTTP/1.0 without a Host header: not a browser, nothing to check.
    expect(checkHostAndOrigin(undefined, undefined, open)).toBeUndefined();
  });

  it('refuses a rebinding host name, whatever the origin', () => {
    expect(checkHostAndOrigin('evil.example.com', 'http://evil.example.com', open)?.code).toBe(
      'HOST_NOT_ALLOWED',
    );
    expect(checkHostAndOrigin('evil.example.com:8081', undefined, open)?.code).toBe(
      'HOST_NOT_ALLOWED',
    );
    expect(checkHostAndOrigin('10.0.0.5:8081', undefined, open)?.code).toBe('HOST_NOT_ALLOWED');
  });

  it('refuses a foreign or null origin on a loopback host', () => {
    expect(checkHostAndOrigin('127.0.0.1:8081', 'http://evil.example.com', open)?.code).toBe(
      'ORIGIN_NOT_ALLOWED',
    );
    expect(checkHostAndOrigin('127.0.0.1:8081', 'null', open)?.code).toBe('ORIGIN_NOT_ALLOWED');
  });
});

describe('a service with keys required', () => {
  it('answers any host while no list is set, and only listed or loopback ones once set', () => {
    expect(checkHostAndOrigin('reach.example.com', undefined, keyed)).toBeUndefined();
    const listed = { ...keyed, allowedHosts: ['reach.example.com'] };
    expect(checkHostAndOrigin('reach.example.com:443', undefined, listed)).toBeUndefined();
    expect(checkHostAndOrigin('127.0.0.1:8081', undefined, listed)).toBeUndefined();
    expect(checkHostAndOrigin('other.example.com', undefined, listed)?.code).toBe(
      'HOST_NOT_ALLOWED',
    );
  });

  it('answers its own origin and listed ones, refuses the others', () => {
    expect(
      checkHostAndOrigin('reach.example.com', 'https://reach.example.com', keyed),
    ).toBeUndefined();
    expect(checkHostAndOrigin('reach.example.com', 'https://evil.example.com', keyed)?.code).toBe(
      'ORIGIN_NOT_ALLOWED',
    );
    const listed = { ...keyed, allowedOrigins: ['https://app.example.com'] };
    expect(
      checkHostAndOrigin('reach.example.com', 'https://app.example.com/', listed),
    ).toBeUndefined();
  });
});
