/**
 * Property-based HTTP fuzzing of the router and registry-sync, running open on loopback, against
 * real services on real Redis while live agents serve a steady flow of valid tasks:
 *
 * - every endpoint of each service's OpenAPI document (read at run time, so new endpoints are
 *   covered), with requests generated with fast-check plus mutated ones — hostile ids, wrong
 *   types, deep and huge JSON, bad UTF-8, unknown fields, odd headers and content types, broken
 *   HTTP framing;
 * - the protocol edges the documents do not describe: every A2A JSON-RPC method (1.0 and 0.3
 *   names, at `/a2a/<capability>` and `/a2a`), every MCP method and tool over `/mcp` and through
 *   one `reach mcp` process, the event streams with a hostile `Last-Event-ID`, and registration
 *   with hostile AgentCards (`card`, `card_url`).
 *
 * What a user checks: no reply is a server error (5xx other than the designed 503 NO_AGENT, or a
 * JSON-RPC -32603 internal error), a call about a task that does not exist gets "not found" and
 * one with a malformed id "invalid params", no request hangs, no process exits (each service's
 * /livez answers every 100 requests), and every valid task of the run completes.
 * `REACH_FUZZ_COUNT`, `REACH_FUZZ_RPC_COUNT`, `REACH_FUZZ_ID_COUNT`, `REACH_FUZZ_SEED`,
 * `REACH_FUZZ_CONCURRENCY`, `REACH_FUZZ_ONLY`: see support/fuzz/settings.ts; `npm run fuzz`
 * runs 10,000 requests per endpoint and 2,000 per method (10,000 for those taking a task id).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runEdgeLeg } from '../support/fuzz/edge-leg.ts';
import { runLeg } from '../support/fuzz/leg.ts';
import {
  EDGE_TIMEOUT_MS,
  FUZZ_COUNT,
  FUZZ_ID_COUNT,
  FUZZ_RPC_COUNT,
  LEG_TIMEOUT_MS,
} from '../support/fuzz/settings.ts';
import { expectCleanEdgeLeg, expectCleanLeg } from '../support/fuzz/verdict.ts';
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
    // A client's mistakes and designed refusals are logged below error level.
    expect(stack.errorLines(), 'error-level log lines').toEqual([]);
  },
  LEG_TIMEOUT_MS,
);

it(
  `open on loopback, protocol edges: ${FUZZ_RPC_COUNT} requests per A2A and MCP method, tool, stream and card (${FUZZ_ID_COUNT} per method taking a task id), no 5xx or -32603, no exit`,
  async () => {
    const leg = await runEdgeLeg({
      name: 'fuzz-open-edges',
      title: 'fuzz, open on loopback',
      stack,
      tenant: 'default',
    });
    expectCleanEdgeLeg(leg);
    // A client's mistakes and designed refusals are logged below error level.
    expect(stack.errorLines(), 'error-level log lines').toEqual([]);
  },
  EDGE_TIMEOUT_MS,
);
