/**
 * The router as its service builds it: without REACH_REGISTRY_URL (unset, or empty as the
 * launcher clears a variable) the agents' drain and serve routes answer 503
 * REGISTRY_NOT_CONFIGURED.
 */
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../../index.ts';
import { optionsFromEnv } from '../../options.ts';

let router: RouterService | undefined;

afterEach(async () => {
  await router?.close();
  router = undefined;
});

describe('the router’s drain and serve without REACH_REGISTRY_URL', () => {
  for (const [name, env] of [
    ['unset', {}],
    ['empty', { REACH_REGISTRY_URL: '' }],
  ] as const)
    it(`answer 503 REGISTRY_NOT_CONFIGURED (${name})`, async () => {
      router = await createRouterService(
        { ...optionsFromEnv(env), redisUrl: testServices().redisUrl, prefix: randomPrefix() },
        { logger: pino({ level: 'silent' }) },
      );
      expect(router.options.registryUrl || undefined).toBeUndefined();
      for (const path of ['drain', 'serve']) {
        const res = await router.app.inject({ method: 'POST', url: `/v1/agents/a1/${path}` });
        expect(res.statusCode, path).toBe(503);
        expect(res.json()).toMatchObject({ error: 'REGISTRY_NOT_CONFIGURED' });
      }
    });
});
