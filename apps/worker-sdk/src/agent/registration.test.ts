import { describe, expect, it } from 'vitest';
import { ReachConnectionError, ReachHttpError } from '../errors.ts';
import { compileAgentOptions } from './options.ts';
import { isTransientRegisterError, registerBody } from './registration.ts';

describe('isTransientRegisterError', () => {
  const http = (status: number, error: string) =>
    new ReachHttpError('POST x', status, { error, message: '' });
  it('retries on no answer, 5xx, 408, 429; not on our own mistakes', () => {
    expect(
      isTransientRegisterError(new ReachConnectionError('POST x', false, new Error('refused'))),
    ).toBe(true);
    expect(isTransientRegisterError(http(503, 'STORE_UNAVAILABLE'))).toBe(true);
    expect(isTransientRegisterError(http(500, 'INTERNAL'))).toBe(true);
    expect(isTransientRegisterError(http(429, 'HTTP_429'))).toBe(true);
    expect(isTransientRegisterError(http(400, 'INVALID_BODY'))).toBe(false);
    expect(isTransientRegisterError(http(401, 'UNAUTHORIZED'))).toBe(false);
  });
});

describe('registerBody', () => {
  const o = compileAgentOptions({
    agentId: 'a',
    instanceId: 'i',
    capabilities: ['c'],
    maxConcurrency: 3,
    handler: () => Promise.resolve(1),
  });
  it('sends the instance id and leaves unset options out, ready included', () => {
    expect(registerBody(o, true)).toEqual({
      agent_id: 'a',
      instance_id: 'i',
      capabilities: ['c'],
      max_concurrency: 3,
      channel: 'push',
    });
  });
  it('sends region and tags when given', () => {
    const placed = compileAgentOptions({
      agentId: 'a',
      capabilities: ['c'],
      region: 'eu',
      tags: ['gpu'],
      handler: () => Promise.resolve(1),
    });
    expect(registerBody(placed, true)).toMatchObject({ region: 'eu', tags: ['gpu'] });
  });
  it('sends ready: false for a two-phase start not yet done', () => {
    expect(registerBody(o, false)).toMatchObject({ agent_id: 'a', ready: false });
  });
});
