import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseFastifyOptions, installErrorHandling } from './error-handler.ts';
import { nonFiniteAt } from './finite-numbers.ts';

const app = Fastify(baseFastifyOptions(1024 * 1024));

beforeAll(async () => {
  installErrorHandling(app, () => false);
  const limits = {
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, maximum: 1000 } },
  };
  app.get('/q', { schema: { querystring: limits } }, async (request) => request.query);
  app.post(
    '/b',
    {
      schema: {
        body: {
          type: 'object',
          properties: {
            items: { type: 'array', items: limits },
            payload: {},
          },
        },
      },
    },
    async (request) => request.body,
  );
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

describe('numbers that ajv coerces to Infinity', () => {
  it.each(['Infinity', '-Infinity', '1e400', '9'.repeat(400)])(
    'answers 400 INVALID_QUERY to ?limit=%s',
    async (value) => {
      const res = await app.inject({ url: `/q?limit=${value.slice(0, 500)}` });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'INVALID_QUERY' });
      expect(res.json().message).toContain('querystring/limit');
    },
  );

  it('answers 400 INVALID_BODY to a numeric field given as "1e400" in a body', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/b',
      payload: { items: [{ limit: 5 }, { limit: '1e400' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'INVALID_BODY',
      message: expect.stringContaining('body/items/1/limit'),
    });
  });

  it('passes finite numbers and never walks a free-form payload', async () => {
    expect((await app.inject({ url: '/q?limit=7' })).json()).toEqual({ limit: 7 });
    const res = await app.inject({
      method: 'POST',
      url: '/b',
      payload: { items: [{ limit: '9' }], payload: { limit: 'Infinity' } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ items: [{ limit: 9 }], payload: { limit: 'Infinity' } });
    expect(nonFiniteAt({}, { deep: Infinity })).toBeUndefined();
  });
});
