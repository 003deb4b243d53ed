import { describe, expect, it } from 'vitest';
import { formatTable } from './table.ts';

describe('formatTable', () => {
  it('aligns columns and marks figures that were not measured', () => {
    const text = formatTable([
      {
        leg: 'single',
        candidate: 'none',
        connections: 0,
        idleCpuPct: 0.1,
        cpuUsPerDelivery: 15.24,
      },
      {
        leg: 'cluster',
        candidate: 'spublish',
        connections: 6,
        idleCpuPct: 0.765,
        wakeP50Ms: 0.43,
        wakeP99Ms: 1.02,
        wakeMaxMs: 2.04,
        woken: '200/200',
        cpuUsPerDelivery: NaN,
      },
    ]);
    const lines = text.split('\n');
    expect(lines).toHaveLength(4);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
    expect(lines[2]).toContain('15.2 (base)');
    expect(lines[2]).toContain('—');
    expect(lines[3]).toMatch(/\| +0\.77 \| +0\.43 \| +1\.02 \| +2\.04 \| 200\/200 \| +— \|$/);
  });
});
