import { describe, expect, it } from 'vitest';
import { newApiKey, parseApiKey, sameDigest, sha256Hex } from './key-format.ts';

describe('API key format', () => {
  it('makes random 256-bit keys whose secret only the hash is kept of', () => {
    const a = newApiKey();
    const b = newApiKey();
    expect(a.key).toMatch(/^rk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(a.key).not.toBe(b.key);
    const parsed = parseApiKey(a.key);
    expect(parsed?.keyId).toBe(a.keyId);
    expect(Buffer.from(parsed?.secret ?? '', 'base64url')).toHaveLength(32);
    expect(a.secretHash).toBe(sha256Hex(parsed?.secret ?? ''));
    expect(a.secretHash).not.toContain(parsed?.secret);
  });

  it('refuses anything not shaped like a key', () => {
    for (const bad of [
      '',
      'rk_',
      'rk_0123_abc',
      `rk_${'g'.repeat(16)}_${'a'.repeat(43)}`,
      'Bearer x',
    ])
      expect(parseApiKey(bad)).toBeUndefined();
  });

  it('compares digests', () => {
    expect(sameDigest(sha256Hex('x'), sha256Hex('x'))).toBe(true);
    expect(sameDigest(sha256Hex('x'), sha256Hex('y'))).toBe(false);
    expect(sameDigest('', '')).toBe(false);
  });
});
