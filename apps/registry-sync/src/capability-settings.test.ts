import { describe, expect, it } from 'vitest';
import { ownValue } from './capability-settings.ts';

describe('ownValue', () => {
  it("answers a capability's own setting, and nothing for Object.prototype's member names", () => {
    const leases: Record<string, number> = { render: 5000 };
    expect(ownValue(leases, 'render')).toBe(5000);
    for (const name of ['constructor', 'valueOf', '__proto__', 'toString', 'other'])
      expect(ownValue(leases, name)).toBeUndefined();
  });
});
