/**
 * Probes that see a shared dependency (docs/PROTOCOL.md §6, Dependencies): three agents whose
 * health checks report a `model-gateway`, and a fourth that does not use it. Taken down on the
 * three, it is flagged fleet-wide within a probe interval: all three SUSPECT with
 * `dependency_down`, one `dependency` fleet event naming them, `reach_dependency_down` at 1 (the
 * ReachSharedDependencyDown alert's query). Tasks of their capability wait meanwhile instead of
 * failing, and run once the gateway answers again and the agents come back. The figure is printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import { decodeFleetEvent, type AgentView } from '@agent-reach/protocol';
import type { HealthAnswer, ReachAgent } from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { http, START_TIMEOUT_MS, startStack, type Stack } from '../support/stack.ts';
import { untilRouted } from '../support/endpoints.ts';

const PROBE_MS = 2000;
const CAPABILITY = 'gw-chat';
const SHARING = ['gw-a', 'gw-b', 'gw-c'];

let stack: Stack;
let redis: TestRedis;
const agents: ReachAgent[] = [];
let gatewayUp = true;
const ran: string[] = [];

/** The health check of an agent that calls the gateway (and a vector store that stays up). */
const health = (): HealthAnswer => ({
  dependencies: {
    'model-gateway': gatewayUp
      ? { ok: true, latency_ms: 4 }
      : { ok: false, latency_ms: 3000, detail: 'connect timeout' },
    'vector-db': { ok: true, latency_ms: 1 },
  },
});

const view = async (id: string) =>
  (await http<AgentView>(`${stack.registryUrl}/v1/agents/${id}`)).body;

beforeAll(async () => {
  stack = await startStack({
    env: { REACH_PROBE_MS: String(PROBE_MS), REACH_SWEEP_MS: '250', REACH_SNAPSHOT_MS: '500' },
  });
  redis = connectRedis(stack);
  for (const id of SHARING)
    agents.push(
      await startAgent(
        stack,
        id,
        [CAPABILITY],
        async (t) => {
          ran.push(t.taskId);
          return { ok: true };
        },
        { health },
      ),
    );
  // Another capability's agent, without the gateway: untouched by the flag.
  agents.push(
    await startAgent(stack, 'gw-other', ['gw-embed'], async () => 1, {
      health: () => ({ dependencies: { 'vector-db': { ok: true } } }),
    }),
  );
  await untilRouted(stack, CAPABILITY);
}, 2 * START_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  redis?.disconnect();
  await stack?.stop();
});

describe('a dependency down on three agents', () => {
  it('is flagged fleet-wide within a probe interval, holds their tasks, and clears', async () => {
    // Each agent's probe answer is kept with it and shown.
    await waitFor(
      async () => {
        const views = await Promise.all(SHARING.map(view));
        return views.every((v) => v.health_check?.dependencies['model-gateway']?.ok === true);
      },
      { timeoutMs: 4 * PROBE_MS + 5000 },
    );
    expect((await view('gw-a')).health_check?.dependencies).toEqual({
      'model-gateway': { ok: true, latency_ms: 4 },
      'vector-db': { ok: true, latency_ms: 1 },
    });

    const downAt = Date.now();
    gatewayUp = false;
    await waitFor(
      async () =>
        (await Promise.all(SHARING.map(view))).every(
          (v) => v.status === 'SUSPECT' && v.dependency_down === 'model-gateway',
        ),
      { timeoutMs: 4 * PROBE_MS, intervalMs: 50 },
    );
    const elapsed = Date.now() - downAt;
    console.log(
      `shared dependency: 3 agents SUSPECT ${elapsed} ms after the gateway went down (probe interval ${PROBE_MS} ms, sweep 250 ms)`,
    );
    // One probe interval, plus one sweep and the health recorder's 200 ms flush.
    expect(elapsed).toBeLessThanOrEqual(PROBE_MS + 250 + 200 + 500);
    const a = await view('gw-a');
    expect(a.health_check).toMatchObject({
      ok: false,
      dependencies: { 'model-gateway': { ok: false, latency_ms: 3000, detail: 'connect timeout' } },
    });
    expect((await view('gw-other')).status).toBe('HEALTHY');

    const events = (await redis.xrange(stack.keys.fleetEvents(), '-', '+')).map(([, f]) =>
      decodeFleetEvent(f),
    );
    const flagged = events.filter((e) => e?.kind === 'dependency' && e.state === 'down');
    expect(flagged).toHaveLength(1);
    // Flagged once two of the three had answered; each agent's change names the dependency.
    expect(flagged[0]).toMatchObject({ dependency: 'model-gateway', capability: CAPABILITY });
    expect(flagged[0]?.agents?.length).toBeGreaterThanOrEqual(2);
    expect(SHARING).toEqual(expect.arrayContaining(flagged[0]?.agents ?? []));
    const marked = events.filter(
      (e) => e?.kind === 'status' && e.to === 'SUSPECT' && /model-gateway/.test(e.reason ?? ''),
    );
    expect(new Set(marked.map((e) => e?.agent_id))).toEqual(new Set(SHARING));
    const metrics = await (await fetch(`${stack.registryUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /reach_dependency_down\{dependency="model-gateway",capability="gw-chat"[^}]*\} 1/,
    );
    expect(metrics).toMatch(
      /reach_dependency_failing_agents\{dependency="model-gateway",capability="gw-chat"[^}]*\} 3/,
    );

    // A task now waits for the agents instead of failing into the dead-letter queue.
    const sub = await http<{ task_id: string; status: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: CAPABILITY, payload: { q: 1 }, timeout_s: 60 },
    });
    expect(sub.status).toBe(202);
    await new Promise((r) => setTimeout(r, PROBE_MS));
    const waiting = await http<{ status: string }>(
      `${stack.routerUrl}/v1/tasks/${sub.body.task_id}`,
    );
    expect(['queued', 'accepted']).toContain(waiting.body.status);
    expect(ran).not.toContain(sub.body.task_id);

    // The gateway answers again: each agent's next probe brings it back, and the task runs.
    gatewayUp = true;
    await waitFor(
      async () =>
        (await Promise.all(SHARING.map(view))).every(
          (v) => v.status === 'HEALTHY' && v.dependency_down === undefined,
        ),
      { timeoutMs: 4 * PROBE_MS },
    );
    await waitFor(
      async () =>
        (await http<{ status: string }>(`${stack.routerUrl}/v1/tasks/${sub.body.task_id}`)).body
          .status === 'completed',
      { timeoutMs: 20_000 },
    );
    // The flag clears on the leader's next pass after the answers: an `up` event, no gauge.
    const up = await waitFor(
      async () =>
        (await redis.xrange(stack.keys.fleetEvents(), '-', '+'))
          .map(([, f]) => decodeFleetEvent(f))
          .find((e) => e?.kind === 'dependency' && e.state === 'up'),
      { timeoutMs: 5000 },
    );
    expect(up).toMatchObject({ dependency: 'model-gateway', capability: CAPABILITY });
    await waitFor(
      async () =>
        !/reach_dependency_down\{/.test(await (await fetch(`${stack.registryUrl}/metrics`)).text()),
      { timeoutMs: 5000 },
    );
  });
});
