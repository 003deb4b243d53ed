import { describe, expect, it } from 'vitest';
import { jsonDepthExceeds, jsonTextDepth, MAX_JSON_DEPTH } from './json-depth.ts';

const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n);

describe('jsonTextDepth', () => {
  it('counts arrays and objects, not brackets in strings', () => {
    expect(jsonTextDepth('1')).toBe(0);
    expect(jsonTextDepth('{}')).toBe(1);
    expect(jsonTextDepth('{"a":[{"b":[]}],"c":{}}')).toBe(4);
    expect(jsonTextDepth('{"a":"[[[{{{","b":"\\"[[["}')).toBe(1);
    // An escaped backslash ends before the quote; an escaped quote does not end the string.
    expect(jsonTextDepth('[["\\\\",[1]]]')).toBe(3);
    expect(jsonTextDepth('[["\\\\\\"[[[",1]]')).toBe(2);
    expect(jsonTextDepth('["unterminated [[[')).toBe(1);
  });

  it('stops as soon as the limit is passed', () => {
    expect(jsonTextDepth(nested(4500), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
    expect(jsonTextDepth(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH);
  });
});

describe('jsonDepthExceeds', () => {
  it('finds a value past the limit anywhere, at any depth, without recursing', () => {
    expect(jsonDepthExceeds(JSON.parse(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonDepthExceeds(JSON.parse(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(jsonDepthExceeds({ a: 1, b: [{ c: JSON.parse(nested(100_000)) }] })).toBe(true);
    expect(jsonDepthExceeds('[[[[')).toBe(false);
    expect(jsonDepthExceeds(null)).toBe(false);
  });
});
