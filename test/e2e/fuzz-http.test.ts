/**
 * Property-based HTTP fuzzing of every endpoint of the router and registry-sync, running open
 * on loopback: requests generated with fast-check from each service's OpenAPI document (read at
 * run time, so new endpoints are covered) plus mutated ones — hostile ids, wrong types, deep and
 * huge JSON, bad UTF-8, unknown fields, odd headers and content types, broken HTTP framing —
 * against real services on real Redis, while live agents serve a steady flow of valid tasks.
 *
 * What a user checks: no reply is a server error (5xx other than the designed 503 NO_AGENT),
 * no request hangs, neither service exits, and every valid task of the run completes.
 * `REACH_FUZZ_COUNT`, `REACH_FUZZ_SEED`, `REACH_FUZZ_CONCURRENCY`, `REACH_FUZZ_ONLY`: see
 * support/fuzz/settings.ts; `npm run fuzz` runs 10,000 requests per endpoint.
 */
import { afterAll, beforeAll, it } from 'vitest';
import { runLeg } from '../support/fuzz/leg.ts';
import { FUZZ_COUNT, LEG_TIMEOUT_MS } from '../support/fuzz/settings.ts';
import { expectCleanLeg } from '../support/fuzz/verdict.ts';
import { startStack, type Stack } from '../support/stack.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

it(
  `open on loopback: ${FUZZ_COUNT} requests to every endpoint, no 5xx, no exit, every valid task completes`,
  async () => {
    const leg = await runLeg({ name: 'fuzz-open', title: 'fuzz, open on loopback', stack });
    expectCleanLeg(leg);
  },
  LEG_TIMEOUT_MS,
);
