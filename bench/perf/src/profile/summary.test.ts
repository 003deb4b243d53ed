import { describe, expect, it } from 'vitest';
import { areaOf, summarizeProfile, type CpuProfile } from './summary.ts';

describe('areaOf', () => {
  it('names packages, workspace folders, node internals and V8 pseudo-frames', () => {
    expect(areaOf('file:///w/node_modules/ioredis/built/Redis.js', 'x')).toBe('ioredis');
    expect(areaOf('file:///w/node_modules/@fastify/ajv-compiler/index.js', 'x')).toBe(
      '@fastify/ajv-compiler',
    );
    expect(areaOf('file:///w/apps/router/src/dispatch/dispatcher.ts', 'submit')).toBe(
      'apps/router',
    );
    expect(areaOf('node:internal/streams/readable', 'read')).toBe('node');
    expect(areaOf('', '(garbage collector)')).toBe('(gc)');
  });
});

describe('summarizeProfile', () => {
  it('splits self time by frame and area, leaves idle out of the busy time, and sums inclusive time of own code', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
    const p: CpuProfile = {
      startTime: 0,
      endTime: 10_000, // 10 ms, 10 samples → 1 ms each
      samples: new Array<number>(10).fill(1),
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), hitCount: 0, children: [2, 3] },
        { id: 2, callFrame: frame('(idle)', ''), hitCount: 4 },
        {
          id: 3,
          callFrame: frame('submit', 'file:///w/apps/router/src/d.ts'),
          hitCount: 2,
          children: [4],
        },
        {
          id: 4,
          callFrame: frame('sendCommand', 'file:///w/node_modules/ioredis/built/Redis.js'),
          hitCount: 4,
        },
      ],
    };
    const s = summarizeProfile(p);
    expect(s.wallMs).toBe(10);
    expect(s.busyMs).toBe(6);
    expect(s.areas[0]).toMatchObject({ name: 'ioredis', ms: 4 });
    expect(s.ownInclusive[0]).toMatchObject({ ms: 6 });
    expect(s.ownInclusive[0]?.pct).toBeCloseTo(100);
  });

  it('counts only the samples inside a time window', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
    const p: CpuProfile = {
      startTime: 1_000_000, // 1,000 ms on the monotonic clock
      endTime: 1_010_000,
      samples: [2, 2, 2, 2, 2, 3, 3, 3, 3, 3],
      timeDeltas: new Array<number>(10).fill(1000),
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 3] },
        { id: 2, callFrame: frame('a', 'file:///w/node_modules/ioredis/x.js') },
        { id: 3, callFrame: frame('b', 'file:///w/node_modules/fastify/y.js') },
      ],
    };
    const s = summarizeProfile(p, 15, { fromMs: 1005.5, toMs: 1010 });
    expect(s.areas.map((a) => a.name)).toEqual(['fastify']);
    expect(s.wallMs).toBeCloseTo(4.5);
  });
});
