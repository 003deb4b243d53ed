import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { maskUrlPassword, serviceLogger } from './logger.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('service logger', () => {
  it('redacts keys, tokens, cookies and Redis passwords', () => {
    const { lines, stream } = capture();
    const log = serviceLogger('test', 'debug', stream);
    log.info(
      { req: { headers: { authorization: 'Bearer rk_secret1', cookie: 'reach_key=s2' } } },
      'a',
    );
    log.info({ key: 'rk_secret3', reply: { key: 'rk_secret4', token: 'tok5' } }, 'b');
    log.info({ redisUrl: 'redis://user:pw6@redis:6379/0', redis: { password: 'pw7' } }, 'c');
    log.info({ err: { message: 'x', command: { name: 'auth', args: ['user', 'pw8'] } } }, 'd');
    const text = lines.join('');
    for (const secret of [
      'rk_secret1',
      's2',
      'rk_secret3',
      'rk_secret4',
      'tok5',
      'pw6',
      'pw7',
      'pw8',
    ])
      expect(text).not.toContain(secret);
    expect(text).toContain('redis://user:[redacted]@redis:6379/0');
  });

  it('masks only the password of a URL', () => {
    expect(maskUrlPassword('rediss://:pw@h:1')).toBe('rediss://:[redacted]@h:1');
    expect(maskUrlPassword('redis://h:6379')).toBe('redis://h:6379');
    expect(maskUrlPassword('/v1/dlq?limit=5&key=rk_x&token=t')).toBe(
      '/v1/dlq?limit=5&key=[redacted]&token=[redacted]',
    );
  });
});
