import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { delayListFrom, ROUTER_SETTINGS, type CallbackMessage } from '@agent-reach/protocol';
import { allowedCallbackUrl } from './callback-url.ts';
import { newWebhookSecret, signatureHeaders } from './signing.ts';
import { nextDelayMs, webhookBodyParts } from './webhook-body.ts';

describe('webhook signatures', () => {
  it('verify with the standardwebhooks package, one signature per secret', () => {
    const [a, b] = [newWebhookSecret(), newWebhookSecret()];
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const now = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders('msg_1-0', now, '{"x":1}', [a, b]);
    expect(headers['webhook-id']).toBe('msg_1-0');
    expect(headers['webhook-timestamp']).toBe(String(now));
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    // Either secret verifies: a receiver still on the previous one, or already on the new one.
    expect(new Webhook(a).verify('{"x":1}', headers)).toEqual({ x: 1 });
    expect(new Webhook(b).verify('{"x":1}', headers)).toEqual({ x: 1 });
    expect(() => new Webhook(newWebhookSecret()).verify('{"x":1}', headers)).toThrow();
    expect(() => new Webhook(a).verify('{"x":2}', headers)).toThrow();
  });
});

describe('callback_url', () => {
  const allowed = { hosts: ['hooks.example.com'], loopback: false };
  it('takes an allowed host', () => {
    expect(allowedCallbackUrl('https://hooks.example.com/a?b=1', allowed).href).toBe(
      'https://hooks.example.com/a?b=1',
    );
  });
  it.each([
    ['not a url', 'is not a URL'],
    ['ftp://hooks.example.com/', 'http or https'],
    ['https://u:p@hooks.example.com/', 'credentials'],
    ['https://evil.example.net/', 'REACH_WEBHOOK_HOSTS'],
    ['http://127.0.0.1:9/', 'REACH_WEBHOOK_HOSTS'],
  ])('refuses %s with CALLBACK_URL_NOT_ALLOWED', (url, says) => {
    expect(() => allowedCallbackUrl(url, allowed)).toThrow(
      expect.objectContaining({
        code: 'CALLBACK_URL_NOT_ALLOWED',
        message: expect.stringContaining(says),
      }),
    );
  });
  it('takes loopback only when allowed', () => {
    expect(allowedCallbackUrl('http://127.0.0.1:9/x', { hosts: [], loopback: true }).port).toBe(
      '9',
    );
  });
});

describe('the retry schedule', () => {
  it('reads waits with units', () => {
    expect(delayListFrom('100ms, 5s,2m,1h,250', 'X')).toEqual([100, 5000, 120_000, 3_600_000, 250]);
  });
  it.each(['', '5d', '-1s', '1.5s', 's'])('refuses %j', (text) => {
    expect(() => delayListFrom(text, 'REACH_WEBHOOK_RETRY_SCHEDULE')).toThrow(
      /REACH_WEBHOOK_RETRY_SCHEDULE/,
    );
  });
  it('spans at least 24 h by default', () => {
    const schedule = ROUTER_SETTINGS.webhookRetrySchedule.default;
    expect(schedule.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(24 * 3_600_000);
  });
  it('gives the next wait, then none', () => {
    expect(nextDelayMs([10, 20], 0)).toBe(10);
    expect(nextDelayMs([10, 20], 1)).toBe(20);
    expect(nextDelayMs([10, 20], 2)).toBeUndefined();
  });
});

describe('the webhook body', () => {
  it('is JSON with the sequence number last, the result as JSON', () => {
    const msg: CallbackMessage = {
      task_id: 'acme/t1',
      status: 'completed',
      capability: 'echo',
      agent_id: 'a1',
      attempt: 1,
      completed_at: 1_700_000_000_000,
      result: '{"ok":true}',
      duration_ms: 12,
    };
    const { type, head, tail } = webhookBodyParts(msg, 't1');
    expect(type).toBe('task.completed');
    expect(JSON.parse(`${head}7${tail}`)).toEqual({
      type: 'task.completed',
      timestamp: '2023-11-14T22:13:20.000Z',
      data: {
        task_id: 't1',
        status: 'completed',
        capability: 'echo',
        agent_id: 'a1',
        attempt: 1,
        completed_at: 1_700_000_000_000,
        result: { ok: true },
        duration_ms: 12,
        seq: 7,
      },
    });
  });
});
