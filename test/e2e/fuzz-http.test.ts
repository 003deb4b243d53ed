/**
 * Property-based HTTP fuzzing of every endpoint of the router and registry-sync, running open
 * on loopback: requests generated with fast-check from each service's OpenAPI document (read at
 * run time, so new endpoints are covered) plus mutated ones — hostile ids, wrong types, deep and
 * huge JSON, bad UTF-8, unknown fields, odd headers and content types, broken HTTP framing —
 * against real services on real Redis, while live agents serve a steady flow of valid tasks.
 *
 * What a user checks: no reply is a server error (5xx other than the designed 503 NO_AGENT),
 * no request hangs, neither service exits, and every valid task of the run completes.
 * `REACH_FUZZ_COUNT`, `REACH_FUZZ_SEED`, `REACH_FUZZ_CONCURRENCY`: see support/fuzz/settings.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { runCampaign } from '../support/fuzz/campaign.ts';
import { TaskFlow } from '../support/fuzz/flow.ts';
import { loadOperations, operationKey, type Operation } from '../support/fuzz/operations.ts';
import {
  FUZZ_CONCURRENCY,
  FUZZ_COUNT,
  FUZZ_ONLY,
  FUZZ_SEED,
  LEG_TIMEOUT_MS,
  saveFigures,
} from '../support/fuzz/settings.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const CAPABILITY = 'fuzz-echo';
const DECOY_CAPABILITY = 'fuzz-decoy';

let stack: Stack;
const agents: ReachAgent[] = [];
const decoys: { id: string; token: string }[] = [];
const exits: string[] = [];

beforeAll(async () => {
  stack = await startStack();
  for (const [name, svc] of [
    ['router', stack.router],
    ['registry-sync', stack.registry],
  ] as const)
    void svc.exited.then((code) => exits.push(`${name} exited with ${code}`));
  for (const id of ['fuzz-echo-a', 'fuzz-echo-b'])
    agents.push(await startAgent(stack, id, [CAPABILITY], async (task) => task.payload));
  // Agents the fuzz may heartbeat, fence, drain and serve with their real tokens.
  for (let i = 0; i < 4; i++) {
    const reg = await http<{ token: string }>(`${stack.registryUrl}/v1/agents/register`, {
      body: { agent_id: `fuzz-decoy-${i}`, capabilities: [DECOY_CAPABILITY], max_concurrency: 1 },
    });
    expect(reg.status).toBe(200);
    decoys.push({ id: `fuzz-decoy-${i}`, token: reg.body.token });
  }
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

it(
  `${FUZZ_COUNT} requests to every endpoint of both services: no 5xx, no exit, every valid task completes`,
  async () => {
    const all: Operation[] = [
      ...(await loadOperations('router', stack.routerUrl)),
      ...(await loadOperations('registry-sync', stack.registryUrl)),
    ];
    expect(all.length).toBeGreaterThan(15);
    const ops = all.filter((op) => !FUZZ_ONLY || FUZZ_ONLY.test(operationKey(op)));

    const flow = new TaskFlow({
      routerUrl: stack.routerUrl,
      capability: CAPABILITY,
      idPrefix: 'fuzz-flow',
      callbackTopic: 'fuzz-flow-topic',
    });
    const seeded = await flow.submit(20);
    const agentTokens = fc.constantFrom(...decoys.map((d) => `Bearer ${d.token}`));
    flow.start();
    const figures = await runCampaign({
      ops,
      perEndpoint: FUZZ_COUNT,
      concurrency: FUZZ_CONCURRENCY,
      seed: FUZZ_SEED,
      stopped: () => exits.length > 0,
      requestOptions: (op) => ({
        known: {
          task_id: seeded,
          agent_id: decoys.map((d) => d.id),
          capability: [CAPABILITY, DECOY_CAPABILITY],
          capabilities: [DECOY_CAPABILITY],
          topic: ['fuzz-flow-topic'],
          callback_topic: ['fuzz-topic'],
        },
        // Long polls are held at most this long, so that a run is bounded in time.
        caps: { wait_ms: 200 },
        ...(op.service === 'registry-sync'
          ? { auth: fc.option(agentTokens, { nil: undefined }) }
          : {}),
      }),
    });
    await flow.stop();
    const unfinished = await flow.unfinished(60_000);

    const text = [
      figures.format(`fuzz, open on loopback (seed ${FUZZ_SEED}, ${FUZZ_COUNT} per endpoint)`),
      `valid tasks: ${flow.accepted.length} accepted, ${flow.accepted.length - unfinished.length} completed, ` +
        `${flow.refused.length} refused; service exits: ${exits.length}`,
    ].join('\n');
    console.log(text);
    saveFigures('fuzz-open', text);

    expect(exits).toEqual([]);
    expect(figures.failures).toEqual([]);
    for (const [key, ep] of figures.endpoints)
      expect(ep.requests, key).toBeGreaterThanOrEqual(FUZZ_COUNT);
    expect(figures.endpoints.size).toBe(ops.length);
    expect(flow.refused).toEqual([]);
    expect(flow.accepted.length).toBeGreaterThan(20);
    expect(unfinished).toEqual([]);
  },
  LEG_TIMEOUT_MS,
);
