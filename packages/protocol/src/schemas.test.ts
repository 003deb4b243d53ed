import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { CallbackQuery, HeartbeatBody, RegisterBody, SubmitBody } from './schemas.ts';

// The same Ajv settings the services give fastify: unknown properties are errors, not dropped.
const ajv = new Ajv({
  removeAdditional: false,
  coerceTypes: true,
  useDefaults: true,
  allErrors: false,
});
const check = (schema: object, value: unknown) => ajv.compile(schema)(structuredClone(value));

describe('SubmitBody', () => {
  it('accepts a minimal task and every optional field', () => {
    expect(check(SubmitBody, { capability: 'echo', payload: null })).toBe(true);
    expect(
      check(SubmitBody, {
        task_id: 'job-1:part.2',
        capability: 'summarise',
        payload: { text: 'x' },
        timeout_s: 30,
        callback_topic: 'caller-7',
        trace_id: 'abc',
      }),
    ).toBe(true);
  });

  it.each([
    ['no capability', { payload: 1 }],
    [
      'a brace in task_id (would choose the hash slot)',
      { task_id: 'a{b}', capability: 'echo', payload: 1 },
    ],
    ['an empty capability', { capability: '', payload: 1 }],
    ['a 129-character task_id', { task_id: 'x'.repeat(129), capability: 'echo', payload: 1 }],
    ['a zero timeout', { capability: 'echo', payload: 1, timeout_s: 0 }],
    ['an unknown field', { capability: 'echo', payload: 1, urgency: 3 }],
  ])('rejects %s', (_name, body) => {
    expect(check(SubmitBody, body)).toBe(false);
  });
});

describe('RegisterBody', () => {
  it('accepts an agent with region, channel and meta', () => {
    expect(
      check(RegisterBody, {
        agent_id: 'gpu-7',
        capabilities: ['embed', 'rank'],
        max_concurrency: 4,
        region: 'eu-west',
        channel: 'pull',
        meta: { model: 'x' },
      }),
    ).toBe(true);
  });

  it.each([
    ['no capabilities', { agent_id: 'a', capabilities: [], max_concurrency: 1 }],
    ['duplicate capabilities', { agent_id: 'a', capabilities: ['x', 'x'], max_concurrency: 1 }],
    ['zero concurrency', { agent_id: 'a', capabilities: ['x'], max_concurrency: 0 }],
    [
      'an unknown channel',
      { agent_id: 'a', capabilities: ['x'], max_concurrency: 1, channel: 'smoke' },
    ],
  ])('rejects %s', (_name, body) => {
    expect(check(RegisterBody, body)).toBe(false);
  });
});

describe('HeartbeatBody and CallbackQuery', () => {
  it('checks inflight, cursors and wait bounds', () => {
    expect(check(HeartbeatBody, { inflight: 0, status: 'idle' })).toBe(true);
    expect(check(HeartbeatBody, { inflight: -1 })).toBe(false);
    expect(check(CallbackQuery, { after: '1717171717171-0', wait_ms: '1000' })).toBe(true);
    expect(check(CallbackQuery, { after: '0' })).toBe(true);
    expect(check(CallbackQuery, { after: 'latest' })).toBe(false);
    expect(check(CallbackQuery, { wait_ms: 30001 })).toBe(false);
  });
});
