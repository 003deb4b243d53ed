import { describe, expect, it } from 'vitest';
import { networkFailure, socketErrorCode } from './net-errors.ts';

const sysError = (code: string) => Object.assign(new Error(code), { code });
const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });

describe('socketErrorCode', () => {
  it('finds the code in the cause chain and in an AggregateError', () => {
    expect(socketErrorCode(fetchFailed(sysError('ECONNREFUSED')))).toBe('ECONNREFUSED');
    const both = new AggregateError([new Error('x'), sysError('ECONNREFUSED')]);
    expect(socketErrorCode(new Error('sdk', { cause: fetchFailed(both) }))).toBe('ECONNREFUSED');
    expect(socketErrorCode(fetchFailed(sysError('UND_ERR_SOCKET')))).toBe('UND_ERR_SOCKET');
  });

  it('ignores codes that are not a socket’s', () => {
    expect(socketErrorCode(Object.assign(new Error('x'), { code: 'HANDLER_ERROR' }))).toBe(
      undefined,
    );
    expect(socketErrorCode('ECONNREFUSED')).toBeUndefined();
  });
});

describe('networkFailure', () => {
  it('makes a refused connection and an unknown host unreachable', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND'])
      expect(networkFailure(fetchFailed(sysError(code)))).toEqual({
        kind: 'failed',
        code: 'ENDPOINT_UNREACHABLE',
        error: `endpoint unreachable: ${code}`,
        retryable: true,
        unreachable: true,
      });
  });

  it('makes other socket errors a retryable ENDPOINT_ERROR, and leaves the rest alone', () => {
    expect(networkFailure(fetchFailed(sysError('ECONNRESET')))).toEqual({
      kind: 'failed',
      code: 'ENDPOINT_ERROR',
      error: 'connection failed: ECONNRESET',
      retryable: true,
    });
    expect(networkFailure(new Error('not a socket'))).toBeUndefined();
  });
});
