import { describe, expect, it } from 'vitest';
import { newTraceId, parseTraceparent, resolveTraceId } from './trace-context.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it('reads a version 00 header', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({
      version: '00',
      traceId: TRACE,
      parentId: SPAN,
      flags: '01',
    });
  });

  it('tolerates surrounding whitespace', () => {
    expect(parseTraceparent(`  00-${TRACE}-${SPAN}-00 `)?.traceId).toBe(TRACE);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['several headers', [`00-${TRACE}-${SPAN}-01`, `00-${TRACE}-${SPAN}-01`]],
    ['uppercase hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['version 00 with more fields', `00-${TRACE}-${SPAN}-01-extra`],
    ['bad separators', `00_${TRACE}_${SPAN}_01`],
    ['non-hex flags', `00-${TRACE}-${SPAN}-zz`],
    ['higher version without a dash after flags', `01-${TRACE}-${SPAN}-01x`],
  ])('refuses %s', (_name, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('reads the known fields of a higher version', () => {
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01-what-the-future-holds`)?.traceId).toBe(TRACE);
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01`)?.traceId).toBe(TRACE);
  });
});

describe('resolveTraceId', () => {
  it('prefers the body, then the header, then makes one', () => {
    expect(resolveTraceId('mine', `00-${TRACE}-${SPAN}-01`)).toBe('mine');
    expect(resolveTraceId(undefined, `00-${TRACE}-${SPAN}-01`)).toBe(TRACE);
    expect(resolveTraceId('', 'garbage')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('makes ids a traceparent can carry', () => {
    const id = newTraceId();
    expect(parseTraceparent(`00-${id}-${SPAN}-01`)?.traceId).toBe(id);
    expect(newTraceId()).not.toBe(id);
  });
});
