import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { listRoutes } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

let service: RegistryService;

beforeAll(async () => {
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix: randomPrefix() },
    { logger: pino({ level: 'silent' }) },
  );
  await service.app.ready();
});

afterAll(async () => {
  await service.close();
});

describe('registry-sync OpenAPI document', () => {
  it('documents every route registry-sync serves, with its method', async () => {
    const doc = (await service.app.inject({ url: '/docs/json' })).json<{
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    }>();
    expect(doc.openapi).toMatch(/^3\./);
    const served = listRoutes(service.app).filter((r) => !r.url.startsWith('/docs'));
    expect(served.length).toBeGreaterThan(5);
    const missing = served.filter(
      (r) => !doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()],
    );
    expect(missing).toEqual([]);
  });
});
