import { describe, expect, it } from 'vitest';
import { isRedisUnavailable } from './redis-errors.ts';

/** An error shaped as ioredis reports a Redis error reply. */
const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

describe('isRedisUnavailable', () => {
  it('takes a failover that outlasted the Cluster client for the store being unavailable', () => {
    const redirections = new Error(
      'Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down',
    );
    expect(isRedisUnavailable(redirections)).toBe(true);
    expect(isRedisUnavailable(reply('CLUSTERDOWN The cluster is down'))).toBe(true);
    expect(isRedisUnavailable(reply('TRYAGAIN Multiple keys request during rehashing'))).toBe(true);
    expect(
      isRedisUnavailable(
        Object.assign(new Error('Failed to refresh slots cache.'), {
          name: 'ClusterAllFailedError',
        }),
      ),
    ).toBe(true);
  });

  it('leaves a command that Redis refused on its merits alone', () => {
    expect(isRedisUnavailable(reply('WRONGTYPE Operation against a key'))).toBe(false);
    expect(isRedisUnavailable(reply("CROSSSLOT Keys in request don't hash to the same slot"))).toBe(
      false,
    );
    expect(isRedisUnavailable(new Error('something else'))).toBe(false);
    expect(isRedisUnavailable('Connection is closed.')).toBe(false);
  });
});
