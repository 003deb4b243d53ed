import { describe, expect, it } from 'vitest';
import { compileAgentOptions, type ReachAgentOptions } from './options.ts';

const base: ReachAgentOptions = {
  agentId: 'agent-1',
  capabilities: ['echo'],
  handler: () => Promise.resolve(null),
};

describe('compileAgentOptions', () => {
  it('fills in every default', () => {
    const o = compileAgentOptions(base);
    expect(o).toMatchObject({
      registryUrl: 'http://127.0.0.1:8080',
      routerUrl: 'http://127.0.0.1:8081',
      redisUrl: 'redis://127.0.0.1:6379',
      redisOptions: {},
      agentId: 'agent-1',
      capabilities: ['echo'],
      maxConcurrency: 1,
      region: undefined,
      tags: [],
      channel: 'push',
      meta: undefined,
      ready: true,
      registerRetry: { baseMs: 500, capMs: 10_000, jitter: 0.2 },
      redisRetry: { baseMs: 100, capMs: 5000, jitter: 0.2 },
      blockMs: 1000,
      shutdownTimeoutMs: 30_000,
      completedCacheSize: 10_000,
      requestTimeoutMs: 5000,
    });
    expect(o.instanceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(o.logger).toBeDefined();
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('gives each agent its own random instance id', () => {
    expect(compileAgentOptions(base).instanceId).not.toBe(compileAgentOptions(base).instanceId);
  });

  it('keeps what was given and trims a trailing slash off the URLs', () => {
    const o = compileAgentOptions({
      ...base,
      registryUrl: 'http://registry:9000/api/',
      routerUrl: 'http://router:9001/',
      ready: false,
      instanceId: 'inst-7',
      maxConcurrency: 16,
      region: 'eu-west',
      tags: ['gpu'],
      channel: 'pull',
      meta: { model: 'x' },
      registerRetry: { capMs: 2000 },
      blockMs: 50,
    });
    expect(o).toMatchObject({
      registryUrl: 'http://registry:9000/api',
      routerUrl: 'http://router:9001',
      ready: false,
      instanceId: 'inst-7',
      maxConcurrency: 16,
      region: 'eu-west',
      tags: ['gpu'],
      channel: 'pull',
      meta: { model: 'x' },
      registerRetry: { baseMs: 500, capMs: 2000, jitter: 0.2 },
      blockMs: 50,
    });
  });

  it.each<[string, Partial<ReachAgentOptions>, RegExp]>([
    ['agent id with a brace', { agentId: 'a{b}' }, /agentId/],
    ['empty capabilities', { capabilities: [] }, /capabilities/],
    ['bad capability', { capabilities: ['ok', 'not ok'] }, /capabilities\[1\]/],
    ['duplicate capability', { capabilities: ['a', 'a'] }, /unique/],
    ['zero concurrency', { maxConcurrency: 0 }, /maxConcurrency/],
    ['fractional concurrency', { maxConcurrency: 1.5 }, /maxConcurrency/],
    ['bad region', { region: 'eu west' }, /region/],
    ['bad tag', { tags: ['gpu', 'a b'] }, /tags\[1\]/],
    ['duplicate tag', { tags: ['gpu', 'gpu'] }, /unique/],
    ['bad channel', { channel: 'carrier-pigeon' as 'push' }, /channel/],
    ['bad instance id', { instanceId: '' }, /instanceId/],
    ['negative shutdown timeout', { shutdownTimeoutMs: -1 }, /shutdownTimeoutMs/],
    ['bad registry URL', { registryUrl: 'not a url' }, /Invalid URL/],
    ['bad router URL', { routerUrl: 'not a url' }, /Invalid URL/],
    ['the probe capability', { capabilities: ['echo', '_probe'] }, /reserved/],
    ['a non-boolean ready', { ready: 'no' as unknown as boolean }, /ready/],
  ])('rejects %s', (_name, patch, message) => {
    expect(() => compileAgentOptions({ ...base, ...patch })).toThrow(message);
  });

  it('rejects a missing handler', () => {
    expect(() => compileAgentOptions({ ...base, handler: undefined as never })).toThrow(/handler/);
  });
});
