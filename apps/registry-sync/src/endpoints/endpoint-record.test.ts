import { describe, expect, it } from 'vitest';
import { sameDeclaration, storedDeclaration } from './endpoint-record.ts';

const context = {
  agentId: 'scorer',
  tenant: 'acme',
  keyCapabilities: ['score'],
  source: 'api' as const,
  now: 2000,
};

describe('storedDeclaration', () => {
  it('keeps secrets apart, fills the defaults, and leaves out what the body does not say', () => {
    const { record, secrets } = storedDeclaration(
      {
        protocol: 'http',
        url: 'http://127.0.0.1:9',
        capabilities: ['score'],
        headers: { 'X-Api-Key': 'hush-1' },
        bearer_secret: 'hush-2',
      },
      { ...context, createdAt: 1000 },
    );
    expect(record).toEqual({
      agent_id: 'scorer',
      protocol: 'http',
      url: 'http://127.0.0.1:9',
      capabilities: ['score'],
      max_concurrency: 4,
      shared: false,
      timeout_ms: 60_000,
      tenant: 'acme',
      key_capabilities: ['score'],
      source: 'api',
      header_names: ['X-Api-Key'],
      has_bearer_secret: true,
      created_at: 1000,
      updated_at: 2000,
    });
    expect(JSON.stringify(record)).not.toContain('hush');
    expect(secrets).toEqual({ headers: { 'X-Api-Key': 'hush-1' }, bearer_secret: 'hush-2' });
    expect(
      storedDeclaration({ protocol: 'a2a', url: 'http://h' }, context).secrets,
    ).toBeUndefined();
  });
});

describe('sameDeclaration', () => {
  it('tells a change from a declaration written again later', () => {
    const body = { protocol: 'a2a' as const, url: 'http://h', bearer_secret: 's' };
    const stored = storedDeclaration(body, context);
    const read = { record: stored.record, secrets: JSON.stringify(stored.secrets) };
    expect(sameDeclaration(storedDeclaration(body, { ...context, now: 9000 }), read)).toBe(true);
    expect(sameDeclaration(storedDeclaration({ ...body, bearer_secret: 't' }, context), read)).toBe(
      false,
    );
    expect(sameDeclaration(storedDeclaration({ ...body, url: 'http://g' }, context), read)).toBe(
      false,
    );
  });
});
