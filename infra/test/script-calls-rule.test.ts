/**
 * The restriction that keeps Lua scripts behind their definitions (infra/eslint/script-calls.mjs),
 * run by ESLint's RuleTester: a positional call of a script's command is refused wherever it is
 * written, on a connection or on a pipeline; calls through a definition pass.
 */
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, it } from 'vitest';
import { builtinRules } from 'eslint/use-at-your-own-risk';
import { scriptCallRestriction } from '../eslint/script-calls.mjs';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const tester = new RuleTester({
  languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' },
});
const rule = builtinRules.get('no-restricted-syntax');
if (!rule) throw new Error('ESLint has no no-restricted-syntax rule');

tester.run('no-restricted-syntax (script calls)', rule, {
  valid: [
    {
      code: `await RETRY.run(redis, { keys: { task, timeline }, args: { attempt: 2 } });`,
      options: [scriptCallRestriction],
    },
    { code: `RETRY.queue(pipeline, call); redis.hget(k, 'f');`, options: [scriptCallRestriction] },
    { code: `const reachable = agent.reachable();`, options: [scriptCallRestriction] },
  ],
  invalid: [
    {
      code: `await redis.reachRetry(keys.task(id), keys.timeline(id), 2, 'failed');`,
      options: [scriptCallRestriction],
      errors: [{ message: scriptCallRestriction.message }],
    },
    {
      code: `pipeline.add(k, (p) => p.reachLease(k, 1, 2));`,
      options: [scriptCallRestriction],
      errors: [{ message: scriptCallRestriction.message }],
    },
    {
      code: `await this.redis.reachAckTask(...args);`,
      options: [scriptCallRestriction],
      errors: [{ message: scriptCallRestriction.message }],
    },
  ],
});
