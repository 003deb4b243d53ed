/**
 * The lint rule `reach/promise-args` (infra/eslint/promise-args.mjs), run by ESLint's own
 * RuleTester: it refuses the shape that let one A2A request end a router — a key built inside the
 * arguments of a promise after the first of a Promise.all — and the same shape in a map callback,
 * and lets through what was written instead (keys computed first, async callbacks).
 */
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, it } from 'vitest';
import { promiseArgs } from '../eslint/promise-args.mjs';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const tester = new RuleTester({
  languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' },
});

tester.run('reach/promise-args', promiseArgs, {
  valid: [
    // Keys computed first, then only plain values in the calls.
    `const k = keys.task(id); await Promise.all([tasks.view(id, scope), redis.hget(k, 'f')]);`,
    // The first promise may be built by anything: nothing has started before it.
    `await Promise.all([redis.xadd(keys.parked(), ...encode(e)), redis.hincrby(s, 'n', 1)]);`,
    `await Promise.race([read().catch(() => EMPTY), deadline]);`,
    `await Promise.race([p, new Promise((resolve) => setTimeout(resolve, 10))]);`,
    `await Promise.all(list.map((c) => c.stop('SIGTERM')));`,
    `await Promise.all(ids.map(async (id) => redis.exists(keys.task(id))));`,
    `await Promise.all(ks.map((k) => redis.exists(k)));`,
    `await Promise.all([a, b ? c.d(e) : undefined]);`,
    `await Promise.all([first(keys.a()), ...specs.map((s) => spawn(s, ready))]);`,
  ],
  invalid: [
    {
      code: `await Promise.all([tasks.view(id, scope), redis.hget(keys.task(id), 'session_id')]);`,
      errors: [{ messageId: 'element' }],
    },
    {
      code: `await Promise.allSettled([a(), b(JSON.parse(text))]);`,
      errors: [{ messageId: 'element' }],
    },
    {
      code: `await Promise.all(batch.map((id) => redis.exists(keys.task(id))));`,
      errors: [{ messageId: 'callback' }],
    },
    {
      code: `await Promise.all([a(), ...xs.map((x) => spawn(x, healthy('router')))]);`,
      errors: [{ messageId: 'callback' }],
    },
    {
      code: `await Promise.all(xs.map((x) => { check(x); return send(x); }));`,
      errors: [{ messageId: 'callback' }],
    },
  ],
});
