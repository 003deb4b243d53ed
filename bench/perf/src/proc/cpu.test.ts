import { describe, expect, it } from 'vitest';
import { diffCalls, parseInfo, processCpuSeconds, processRssMiB } from './cpu.ts';

describe('processCpuSeconds', () => {
  it('reads this process, and NaN for a pid that does not exist', () => {
    expect(processCpuSeconds(process.pid)).toBeGreaterThanOrEqual(0);
    expect(processCpuSeconds(2 ** 22 + 12345)).toBeNaN();
  });

  it('reads resident memory', () => {
    expect(processRssMiB(process.pid)).toBeGreaterThan(1);
    expect(processRssMiB(2 ** 22 + 12345)).toBeNaN();
  });
});

describe('parseInfo', () => {
  it('reads fields and skips section headers', () => {
    const info = parseInfo(
      '# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n\r\n# Commandstats\r\ncmdstat_xadd:calls=10,usec=5\r\n',
    );
    expect(info.get('used_cpu_sys')).toBe('1.5');
    expect(info.get('cmdstat_xadd')).toBe('calls=10,usec=5');
    expect(info.has('# CPU')).toBe(false);
  });
});

describe('diffCalls', () => {
  it('keeps commands whose count grew', () => {
    const stat = (calls: number, usec: number) => ({ calls, usec });
    const d = diffCalls(
      new Map([
        ['xadd', stat(5, 10)],
        ['get', stat(1, 1)],
      ]),
      new Map([
        ['xadd', stat(9, 18)],
        ['get', stat(1, 1)],
        ['evalsha', stat(2, 30)],
      ]),
    );
    expect([...d]).toEqual([
      ['xadd', stat(4, 8)],
      ['evalsha', stat(2, 30)],
    ]);
  });
});
