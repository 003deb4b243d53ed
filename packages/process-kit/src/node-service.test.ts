import { describe, expect, it } from 'vitest';
import { DIST_CONDITION, nodeArgsFor } from './node-service.ts';

describe('nodeArgsFor', () => {
  it('runs TypeScript through tsx and built JavaScript with the dist condition', () => {
    const ts = nodeArgsFor('/repo/apps/router/src/server.ts');
    expect(ts[0]).toBe('--import');
    expect(ts[1]).toMatch(/^file:.*tsx/);
    expect(ts.at(-1)).toBe('/repo/apps/router/src/server.ts');
    expect(nodeArgsFor('/repo/apps/router/dist/server.js')).toEqual([
      `--conditions=${DIST_CONDITION}`,
      '/repo/apps/router/dist/server.js',
    ]);
  });
});
