import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { apiForVersion, quoteIdentifier } from './influxql.ts';
import { compileEventSinkOptions, eventSinkOptionsFromEnv } from './options.ts';

const silent = pino({ level: 'silent' });

describe('compileEventSinkOptions', () => {
  it('applies the documented defaults', () => {
    const o = compileEventSinkOptions({ logger: silent });
    expect(o).toMatchObject({
      url: undefined,
      bucket: 'reach',
      api: 'auto',
      org: '',
      flushIntervalMs: 1000,
      batchSize: 5000,
      maxBufferPoints: 20_000,
      requestTimeoutMs: 2000,
      maxRetries: 3,
      retryBaseDelayMs: 500,
      closeTimeoutMs: 5000,
    });
  });

  it('strips trailing slashes from the URL and treats an empty one as none', () => {
    expect(compileEventSinkOptions({ url: 'http://127.0.0.1:8086//', logger: silent }).url).toBe(
      'http://127.0.0.1:8086',
    );
    expect(compileEventSinkOptions({ url: ' ', logger: silent }).url).toBeUndefined();
  });

  it.each([
    [{ url: 'not a url' }, /url/],
    [{ url: 'ftp://x' }, /http/],
    [{ api: 'v3' as 'v1' }, /api/],
    [{ bucket: '' }, /bucket/],
    [{ batchSize: 0 }, /batchSize/],
    [{ flushIntervalMs: 1.5 }, /flushIntervalMs/],
    [{ maxRetries: -1 }, /maxRetries/],
  ])('rejects %j', (opts, message) => {
    expect(() => compileEventSinkOptions({ ...opts, logger: silent })).toThrow(message);
  });

  it('allows maxRetries: 0', () => {
    expect(compileEventSinkOptions({ maxRetries: 0, logger: silent }).maxRetries).toBe(0);
  });
});

describe('eventSinkOptionsFromEnv', () => {
  it('reads the INFLUX_* variables and leaves unset or empty ones out', () => {
    expect(eventSinkOptionsFromEnv({})).toEqual({});
    expect(eventSinkOptionsFromEnv({ INFLUX_URL: '', INFLUX_TOKEN: ' ' })).toEqual({});
    expect(
      eventSinkOptionsFromEnv({
        INFLUX_URL: 'http://127.0.0.1:8086',
        INFLUX_BUCKET: 'b',
        INFLUX_API: 'V1',
        INFLUX_TOKEN: 't',
        INFLUX_ORG: 'o',
      }),
    ).toEqual({ url: 'http://127.0.0.1:8086', bucket: 'b', api: 'v1', token: 't', org: 'o' });
  });

  it('names INFLUX_API when it is invalid', () => {
    expect(() => eventSinkOptionsFromEnv({ INFLUX_API: 'v9' })).toThrow(/INFLUX_API/);
  });
});

describe('apiForVersion', () => {
  it.each([
    ['1.6.7~rc0', 'v1'],
    ['1.7.11', 'v1'],
    ['1.8.10', 'v2'],
    ['v2.7.1', 'v2'],
    ['3.0.0', 'v2'],
    [null, 'v2'],
    ['unknown', 'v2'],
  ])('%s → %s', (version, api) => {
    expect(apiForVersion(version)).toBe(api);
  });
});

describe('quoteIdentifier', () => {
  it('escapes quotes and backslashes', () => {
    expect(quoteIdentifier('a"b\\c')).toBe('"a\\"b\\\\c"');
  });
});
