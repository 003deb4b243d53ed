import { describe, expect, it } from 'vitest';
import { reachKeys } from './keys.ts';
import { bandOfStream, poolBandOf, poolStreams, POOL_BANDS } from './pool-bands.ts';

describe('pool bands', () => {
  it('puts priority 0 in the pool stream itself, 1-4 in band 1 and 5-9 in band 2', () => {
    expect([0, 1, 4, 5, 9].map(poolBandOf)).toEqual([0, 1, 1, 2, 2]);
    const keys = reachKeys('r');
    expect(keys.poolBand('echo', 0)).toBe(keys.pool('echo'));
    expect(poolStreams(keys, 'acme/echo')).toEqual([
      'r:{pool:acme/echo}:b2',
      'r:{pool:acme/echo}:b1',
      'r:{pool:acme/echo}',
    ]);
    expect(poolStreams(keys, 'echo')).toHaveLength(POOL_BANDS);
  });

  it('reads the band back from a stream name', () => {
    const keys = reachKeys('r');
    for (let band = 0; band < POOL_BANDS; band++)
      expect(bandOfStream(keys.poolBand('x:b1', band))).toBe(band);
    expect(bandOfStream(keys.inbox('a1'))).toBe(0);
  });
});
