import { describe, expect, it } from 'vitest';
import { isValidId } from '@agent-reach/protocol';
import { nextNonce } from './nonce.ts';

describe('nextNonce', () => {
  it('never repeats within a process and shares its prefix', () => {
    const seen = new Set(Array.from({ length: 10_000 }, () => nextNonce()));
    expect(seen.size).toBe(10_000);
    const prefixes = new Set([...seen].map((n) => n.split('.')[0]));
    expect(prefixes.size).toBe(1);
  });

  it('is short and a valid id (it may appear in keys and logs)', () => {
    const n = nextNonce();
    expect(n.length).toBeLessThan(24);
    expect(isValidId(n)).toBe(true);
  });
});
