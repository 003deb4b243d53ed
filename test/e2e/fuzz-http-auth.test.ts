/**
 * The HTTP fuzz of every endpoint and protocol edge with API keys required (REACH_AUTH=required,
 * REACH_ADMIN_KEY): the same requests as the open leg, each sent with a valid key of some role
 * (operator, caller, agent), an agent's token, a malformed or forged credential, or none. The
 * live agents register with an agent key and the valid tasks flow with a caller key, both of
 * their own tenant; another tenant's tasks are seeded for the edges' ids, and `reach mcp` runs
 * with a caller key.
 *
 * What a user checks: no 5xx (but the designed 503 NO_AGENT) and no JSON-RPC -32603, another
 * tenant's task is "not found" to a caller, no hang, no exit, every valid task completes; wrong
 * credentials get 401/403, never a server error.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runEdgeLeg } from '../support/fuzz/edge-leg.ts';
import { DECOY_CAPABILITY, FLOW_CAPABILITY } from '../support/fuzz/fixture.ts';
import { runLeg } from '../support/fuzz/leg.ts';
import {
  EDGE_TIMEOUT_MS,
  FUZZ_COUNT,
  FUZZ_ID_COUNT,
  FUZZ_RPC_COUNT,
  LEG_TIMEOUT_MS,
} from '../support/fuzz/settings.ts';
import { expectCleanEdgeLeg, expectCleanLeg } from '../support/fuzz/verdict.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const ADMIN_KEY = randomBytes(32).toString('base64url');
const TENANT = 'fuzz';
const OTHER_TENANT = 'fuzz-other';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    env: {
      REACH_AUTH: 'required',
      REACH_ADMIN_KEY: ADMIN_KEY,
      // Every fuzzed request comes from 127.0.0.1, most with a wrong key: the limit on failed
      // authentications (tested in edge-guards.test.ts) would refuse the valid flow's too.
      REACH_AUTH_FAILURE_LIMIT: '100000000',
      // The leg's A2A push configs and cards name loopback URLs of the test's own.
      REACH_OUTBOUND_LOOPBACK: 'on',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
});

async function makeKey(role: string, capabilities?: string[], tenant = TENANT): Promise<string> {
  const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body: {
      tenant,
      role,
      label: `fuzz ${role}`,
      ...(capabilities ? { capabilities } : {}),
    },
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

it(
  `keys required: ${FUZZ_COUNT} requests to every endpoint with valid, invalid and missing keys, no 5xx, no exit, every valid task completes`,
  async () => {
    // Without a key nothing but the public endpoints answers.
    expect((await http(`${stack.routerUrl}/v1/dlq`)).status).toBe(401);
    const agentKey = await makeKey('agent', [FLOW_CAPABILITY, DECOY_CAPABILITY]);
    const callerKey = await makeKey('caller');
    const fuzzCaller = await makeKey('caller');
    const operator = await makeKey('operator');
    const leg = await runLeg({
      name: 'fuzz-auth',
      title: 'fuzz, keys required',
      stack,
      agentKey,
      callerKey,
      credentials: [ADMIN_KEY, operator, fuzzCaller, agentKey].map((k) => `Bearer ${k}`),
    });
    expectCleanLeg(leg);
    // A client's mistakes and designed refusals are logged below error level.
    expect(stack.errorLines(), 'error-level log lines').toEqual([]);
    const statuses = leg.figures.histogram();
    expect(statuses['401'] ?? 0).toBeGreaterThan(0);
    expect(statuses['403'] ?? 0).toBeGreaterThan(0);
  },
  LEG_TIMEOUT_MS,
);

it(
  `keys required, protocol edges: ${FUZZ_RPC_COUNT} requests per A2A and MCP method, tool, stream and card (${FUZZ_ID_COUNT} per method taking a task id), no 5xx or -32603, no exit`,
  async () => {
    const agentKey = await makeKey('agent', [FLOW_CAPABILITY, DECOY_CAPABILITY]);
    const callerKey = await makeKey('caller');
    const fuzzCaller = await makeKey('caller');
    const operator = await makeKey('operator');
    const otherCaller = await makeKey('caller', undefined, OTHER_TENANT);
    const leg = await runEdgeLeg({
      name: 'fuzz-auth-edges',
      title: 'fuzz, keys required',
      stack,
      tenant: TENANT,
      agentKey,
      callerKey,
      credentials: [ADMIN_KEY, operator, fuzzCaller, agentKey].map((k) => `Bearer ${k}`),
      seesAll: [ADMIN_KEY, operator].map((k) => `Bearer ${k}`),
      callers: [ADMIN_KEY, operator, fuzzCaller].map((k) => `Bearer ${k}`),
      otherTenant: { name: OTHER_TENANT, callerKey: otherCaller },
    });
    expectCleanEdgeLeg(leg);
    // A client's mistakes and designed refusals are logged below error level.
    expect(stack.errorLines(), 'error-level log lines').toEqual([]);
    const statuses = leg.figures.histogram();
    expect(statuses['401'] ?? 0).toBeGreaterThan(0);
    expect(statuses['403'] ?? 0).toBeGreaterThan(0);
  },
  EDGE_TIMEOUT_MS,
);
