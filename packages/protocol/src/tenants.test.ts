import { describe, expect, it } from 'vitest';
import { isIdRef, isValidScopedId, scopedId } from './tenants.ts';

describe('isIdRef', () => {
  it('takes the names a requester gives: bare ids and <tenant>/<id>, default/<id> included', () => {
    for (const name of ['t-1', 'a.b:c_d-9', 'acme/t-1', 'default/t-1', 'x'.repeat(128)])
      expect(isIdRef(name), name).toBe(true);
  });

  it('refuses what no key may be built from', () => {
    const bad: unknown[] = ['', 'a{b}', 'x y', 'y'.repeat(129), 'acme/', '/t', 'a/b/c'];
    for (const name of [...bad, 'ACME/t', 42, null, undefined, { id: 't' }, ['t']])
      expect(isIdRef(name), JSON.stringify(name)).toBe(false);
  });

  it('takes every scoped id a tenant has inside Redis', () => {
    for (const [tenant, id] of [
      ['default', 't'],
      ['acme', 't:1'],
    ] as const)
      expect(isIdRef(scopedId(tenant, id)) && isValidScopedId(scopedId(tenant, id))).toBe(true);
  });
});
