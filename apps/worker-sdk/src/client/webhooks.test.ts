import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { isWebhookVerificationError, verifyWebhook } from './webhooks.ts';

const secret = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
const other = `whsec_${Buffer.from('b'.repeat(32)).toString('base64')}`;
const body = JSON.stringify({ type: 'task.completed', timestamp: '', data: { seq: 1 } });

/** Headers as the standardwebhooks package signs them, with `secrets` (several: space-separated). */
function signed(secrets: string[], at = new Date(), text = body) {
  return {
    'webhook-id': 'msg_1-0',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign('msg_1-0', at, text)).join(' '),
  };
}

describe('verifyWebhook', () => {
  it('verifies a signature the standardwebhooks package made', () => {
    expect(verifyWebhook(secret, body, signed([secret]))).toEqual(JSON.parse(body));
  });

  it('takes fetch Headers, and either secret of a rotation', () => {
    const headers = new Headers(signed([other, secret]));
    expect(verifyWebhook(secret, body, headers).type).toBe('task.completed');
    expect(verifyWebhook([other], body, headers).type).toBe('task.completed');
  });

  it.each([
    ['a changed body', () => verifyWebhook(secret, `${body} `, signed([secret])), 'bad_signature'],
    ['another secret', () => verifyWebhook(other, body, signed([secret])), 'bad_signature'],
    [
      'an old timestamp',
      () => verifyWebhook(secret, body, signed([secret], new Date(Date.now() - 600_000))),
      'stale_timestamp',
    ],
    ['no headers', () => verifyWebhook(secret, body, {}), 'missing_headers'],
  ])('refuses %s', (_what, run, problem) => {
    let caught: unknown;
    try {
      run();
    } catch (err: unknown) {
      caught = err;
    }
    expect(isWebhookVerificationError(caught) && caught.problem).toBe(problem);
  });
});
