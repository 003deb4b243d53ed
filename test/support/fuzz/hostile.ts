/**
 * The hostile half of the fuzz: ids that try path traversal and odd characters, query values of
 * the wrong type, JSON that is deep, huge, broken or not UTF-8, and abusive header values.
 * Everything here is plain data or a fast-check arbitrary; requests are assembled in
 * `requests.ts`.
 */
import fc from 'fast-check';

/**
 * Path segments as they go on the request line (already percent-encoded where meant):
 * traversal, encoded separators, braces (Redis hash tags), NUL, bad escapes, unicode, long ids.
 */
export const HOSTILE_SEGMENTS: readonly string[] = [
  '.',
  '..',
  '../',
  '../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e',
  '%2e%2e%2f%2e%2e%2f',
  '%252e%252e%252f',
  '..%5c..%5c',
  'a/b',
  'a%2Fb',
  '%2F',
  '{x}',
  '%7Bx%7D',
  'a%7B',
  '%7D',
  '*',
  '%2A',
  '%3F',
  '%23frag',
  '%00',
  'a%00b',
  '%',
  '%ZZ',
  '%E2%80%AE',
  '%F0%9F%92%A9',
  '%C0%AF',
  '%FF%FE',
  '%ED%A0%80',
  '%20',
  '+',
  '%0D%0Ax-injected:1',
  'a;b',
  'a,b',
  '__proto__',
  'constructor',
  'prototype',
  'reach:agent:x',
  'CON',
  'x'.repeat(129),
  'x'.repeat(10 * 1024),
  'x'.repeat(20 * 1024),
];

/** A path segment: a hostile one, or random unicode percent-encoded. */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(safeEncode),
  },
);

/** Query values of the wrong type or shape (percent-encoded). */
export const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    'abc',
    '-1',
    '1.5',
    '1e3',
    '0x10',
    '99999999999999999999999',
    'NaN',
    'Infinity',
    'null',
    'true',
    '%5B%5D',
    '%7B%7D',
    '%20%31',
    '%00',
    '%ZZ',
    '%FF',
    'x'.repeat(10 * 1024),
  ),
  hostileSegment,
);

/** Whole query strings that abuse the parser: arrays, prototype keys, floods, bad escapes. */
export const hostileQueryTail: fc.Arbitrary<string> = fc.constantFrom(
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  '__proto__=x',
  'a[b][c][d][e][f][g]=1',
  Array.from({ length: 500 }, (_, i) => `p${i}=${i}`).join('&'),
  '&&&&==&=',
  '%',
  '%E0%A4%A',
  'unknown_param=1',
  '=',
);

/** JSON nested `depth` levels, in one of a few shapes. */
export function deepJson(depth: number, shape: 'array' | 'object' | 'mixed'): string {
  if (shape === 'array') return '['.repeat(depth) + ']'.repeat(depth);
  if (shape === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  const half = Math.floor(depth / 2);
  return '[{"a":'.repeat(half) + 'null' + '}]'.repeat(half);
}

/** Deep JSON text: around the documented limit of 64 and far past it (5,000 and 20,000). */
export const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(64, 65, 200, 1000, 4500, 5000, 5000, 5000, 20_000),
    fc.constantFrom('array' as const, 'object' as const, 'mixed' as const),
  )
  .map(([d, s]) => deepJson(d, s));

/** Huge JSON text: long strings, long arrays, many keys; some over the services' body limit. */
export const hugeJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(64 * 1024, 256 * 1024, 1100 * 1024).map((n) => JSON.stringify('x'.repeat(n))),
  fc.constantFrom(10_000, 50_000).map((n) => `[${Array(n).fill('0').join(',')}]`),
  fc
    .constantFrom(1000, 10_000)
    .map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`),
  fc.constant('9'.repeat(100_000)),
  fc.constant(`"${'\\u0000'.repeat(20_000)}"`),
);

/** JSON values of every type, to stand where a value of another type belongs. */
export const wrongTypeValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    -0,
    1e308,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    'x',
    '1',
    'true',
    [],
    {},
    [null],
    { $gt: '' },
    { __proto__: null, polluted: 1 },
    '9'.repeat(400),
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Byte sequences that are not valid UTF-8 (or are control characters JSON forbids raw). */
export const BAD_UTF8: readonly number[][] = [
  [0xff],
  [0xfe, 0xff],
  [0xc0, 0xaf],
  [0xc3],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0x80, 0x80],
  [0x00],
  [0x1b, 0x5b, 0x32, 0x4a],
];

/** JSON text that is broken or surprising: syntax errors, BOMs, lone surrogates, big numbers. */
export const oddJsonText: fc.Arbitrary<string> = fc.constantFrom(
  '',
  ' ',
  '{',
  '}',
  '{"a":',
  '{"a":1,}',
  "{'a':1}",
  '{"a":1}{"a":2}',
  '[1,2',
  'null',
  'true',
  '0',
  '"x"',
  '[]',
  '\uFEFF{}',
  '{"a":"\\ud800"}',
  '{"a":"\\udfff\\ud800"}',
  '{"a":1e99999}',
  '{"a":-1e-99999}',
  `{"a":${'1'.repeat(400)}}`,
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"a":NaN}',
  '{"a":undefined}',
  '/*c*/{}',
  '{"a":"\\x41"}',
);

/** Values for `Authorization`: malformed, wrong scheme, oversized, duplicated, forged tokens. */
export const badAuthorization: fc.Arbitrary<string | string[]> = fc.oneof(
  fc.constantFrom<string | string[]>(
    '',
    'Bearer',
    'Bearer ',
    'Bearer x',
    'Bearer .',
    'Bearer ..',
    'Bearer 1.',
    'Bearer .secret',
    'Bearer 1.abc',
    'Bearer -1.abc',
    'Bearer 1e3.abc',
    'Bearer 99999999999999999999999.abc',
    'Bearer 1.abc extra',
    'bearer 1.abc',
    'BEARER 1.abc',
    'Basic Zm9vOmJhcg==',
    'Token abc',
    'Bearer \t1.abc',
    'Bearer ' + 'a'.repeat(8000),
    'Bearer ' + '.'.repeat(2000),
    ['Bearer 1.a', 'Bearer 2.b'],
    'Bearer reach_' + '0'.repeat(64),
    'Bearer ' + Buffer.from('x'.repeat(48)).toString('base64url'),
  ),
  fc.string({ maxLength: 200 }).map((s) => 'Bearer ' + latin1(s)),
);

/** `Content-Type` values other than plain `application/json`. */
export const oddContentType: fc.Arbitrary<string | string[]> = fc.constantFrom<string | string[]>(
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=nonsense',
  'APPLICATION/JSON',
  'application/json;;;',
  'application/json; boundary=' + 'x'.repeat(2000),
  'application/jsonx',
  'application/vnd.api+json',
  'application/json, text/plain',
  ['application/json', 'text/plain'],
  ['application/json', 'application/json'],
  '*/*',
  ' ',
  'json',
);

/** Headers besides Authorization and Content-Type that a hostile client may send. */
export const oddHeaders: fc.Arbitrary<Record<string, string | string[]>> = fc.oneof(
  fc.constantFrom<Record<string, string | string[]>>(
    { 'x-fuzz': 'a'.repeat(12 * 1024) },
    { 'x-fuzz': 'a'.repeat(20 * 1024) },
    { cookie: 'reach_session=' + 'a'.repeat(8 * 1024) },
    { cookie: 'reach_session=%; =; ;;' },
    { accept: 'text/event-stream' },
    { accept: 'application/xml;q=1, */*;q=0' },
    { 'accept-encoding': 'gzip;q=abc, br, *' },
    { 'content-encoding': 'gzip' },
    { 'content-encoding': 'br, identity, x' },
    { 'x-forwarded-for': '::1, 999.999.999.999, ' + 'x'.repeat(500) },
    { 'x-request-id': '../../' + 'x'.repeat(1000) },
    { 'last-event-id': '99999999999999999999999-0' },
    { 'last-event-id': '$' },
    { expect: '100-continue' },
    { expect: 'nonsense' },
    { 'if-none-match': '*' },
    { range: 'bytes=0-0,1-1,2-2' },
    { host: 'evil.example' },
    { origin: 'null' },
  ),
  fc
    .integer({ min: 50, max: 400 })
    .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, String(i)]))),
);

/** Keeps only what node's HTTP client lets through in a header value (no CR, LF or NUL). */
export function latin1(s: string): string {
  return s.replace(/[^\x20-\x7e\x80-\xff\t]/g, '?');
}

/** Percent-encodes every byte of a binary string (lone surrogates become U+FFFD). */
export function safeEncode(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0')).join('');
}
