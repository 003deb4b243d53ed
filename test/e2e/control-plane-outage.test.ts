/**
 * The data plane without its control plane (docs/RELIABILITY.md, Without registry-sync): every
 * registry-sync instance is SIGKILLed under a steady load and started again after
 * REACH_OUTAGE_S seconds (40 here; `npm run soak` runs 120). Meanwhile the router accepts every
 * submission, the agents last seen HEALTHY — two SDK agents and an HTTP endpoint served by a
 * relay — keep receiving and running tasks (their slots free when they XACK, not when
 * registry-sync applies the ack), and one raw agent dies mid-outage without a word. Once
 * registry-sync is back, every result is applied and every callback published within 10 s, the
 * dead agent's tasks are retried elsewhere, and no task is lost or reaches the caller twice.
 * The figures are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryOf } from '@agent-reach/launcher';
import { decodeCallback } from '@agent-reach/protocol';
import { startHttpServer } from '@agent-reach/relay/demo';
import { startNodeService, waitFor, type ServiceProcess } from '@agent-reach/testkit';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { declareEndpoint, startRelay, untilHealthy, untilRouted } from '../support/endpoints.ts';
import { FaultWorker } from '../support/fault-worker.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { http, START_TIMEOUT_MS, startStack, type Stack } from '../support/stack.ts';

const OUTAGE_MS = Number(process.env.REACH_OUTAGE_S ?? 40) * 1000;
/** One submission every this many ms: 25 a second. */
const EVERY_MS = 40;
const CAPABILITY = 'steady';
const TOPIC = 'outage-results';

let stack: Stack;
let redis: TestRedis;
let registry: ServiceProcess;
const stops: (() => Promise<unknown>)[] = [];
const agents: ReachAgent[] = [];
let dying: FaultWorker;
/** Handler finishes of the SDK agents: when, by whom. */
const finishes: { at: number; agent: string }[] = [];

beforeAll(async () => {
  stack = await startStack({
    env: {
      REACH_HEARTBEAT_MS: '500',
      REACH_SUSPECT_MS: '2000',
      REACH_OFFLINE_MS: '4000',
      REACH_SWEEP_MS: '200',
      REACH_SNAPSHOT_MS: '500',
      REACH_RETRY_BASE_MS: '200',
    },
  });
  registry = stack.registry;
  redis = connectRedis(stack);
  for (const id of ['cp-a', 'cp-b'])
    agents.push(
      await startAgent(stack, id, [CAPABILITY], async (t) => {
        await new Promise((r) => setTimeout(r, 30));
        finishes.push({ at: Date.now(), agent: id });
        return t.payload;
      }),
    );
  dying = await FaultWorker.start({
    registryUrl: stack.registryUrl,
    redisUrl: stack.redisUrl,
    redisClusterNodes: stack.redisClusterNodes,
    agentId: 'cp-dying',
    capabilities: [CAPABILITY],
    heartbeatMs: 500,
  });
  const server = await startHttpServer();
  stops.push(() => server.close());
  const relay = await startRelay(stack);
  stops.push(() => relay.proc.stop());
  await declareEndpoint(stack, 'cp-http', {
    protocol: 'http',
    url: `${server.url}/echo`,
    capabilities: [CAPABILITY],
    max_concurrency: 4,
  });
  await untilHealthy(stack, ['cp-a', 'cp-b', 'cp-dying', 'cp-http']);
  await untilRouted(stack, CAPABILITY);
}, 3 * START_TIMEOUT_MS);

afterAll(async () => {
  await dying?.kill();
  await Promise.all(agents.map((a) => a.close()));
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await redis?.quit();
  await stack?.router.stop();
  await registry?.stop();
});

/** Final callback items per task_id, and the agent each completion names. */
async function finals(): Promise<{ count: Map<string, number>; by: Map<string, string> }> {
  const count = new Map<string, number>();
  const by = new Map<string, string>();
  for (const [, fields] of await redis.xrange(stack.keys.callback(TOPIC), '-', '+')) {
    const item = decodeCallback(fields);
    if (item.status !== 'completed' && item.status !== 'dead') continue;
    count.set(item.task_id, (count.get(item.task_id) ?? 0) + 1);
    if (item.status === 'completed') by.set(item.task_id, item.agent_id);
  }
  return { count, by };
}

/** The longest stretch between two handler finishes within [from, to]. */
function longestGap(from: number, to: number): number {
  const times = [from, ...finishes.map((f) => f.at).filter((t) => t > from && t < to), to];
  times.sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, (times[i] ?? 0) - (times[i - 1] ?? 0));
  return gap;
}

describe('every registry-sync away under load', () => {
  it(
    'goes on accepting, running and, once it is back, applying everything once',
    async () => {
      const accepted: { id: string; at: number }[] = [];
      const refused = new Map<string, number>();
      let n = 0;
      let loading = true;
      const load = (async () => {
        while (loading) {
          const started = Date.now();
          const id = `cp-${n++}`;
          const res = await http<{ code?: string }>(`${stack.routerUrl}/v1/tasks`, {
            body: { task_id: id, capability: CAPABILITY, payload: { n }, callback_topic: TOPIC },
          });
          if (res.status === 202 || res.status === 200) accepted.push({ id, at: started });
          else {
            const key = `${res.status} ${res.body.code ?? ''}`;
            refused.set(key, (refused.get(key) ?? 0) + 1);
          }
          await new Promise((r) => setTimeout(r, Math.max(0, EVERY_MS - (Date.now() - started))));
        }
      })();

      await new Promise((r) => setTimeout(r, 3000));
      const downAt = Date.now();
      registry.kill('SIGKILL');
      await registry.exited;
      await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
      // Dies without a word: what it was given stays unread or unanswered.
      const diedAt = Date.now();
      await dying.kill();
      await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
      const acceptedInOutage = accepted.filter((a) => a.at >= downAt).map((a) => a.id);
      const stranded = (await redis.hkeys(stack.keys.pending('cp-dying'))).filter(
        (id) => !dying.reads.some((r) => r.taskId === id && r.outcome === 'complete'),
      );
      const upStartedAt = Date.now();
      registry = await startNodeService({
        name: 'registry-sync',
        entry: entryOf('registry-sync'),
        env: { ...stack.env, REGISTRY_PORT: new URL(stack.registryUrl).port },
        healthUrl: `${stack.registryUrl}/healthz`,
        timeoutMs: START_TIMEOUT_MS,
      });
      const upAt = Date.now();

      // Every task accepted so far, but those stranded on the dead agent, was run: its result is
      // applied and its callback published within 10 s of registry-sync answering again.
      const ran = accepted.filter((a) => a.at < upStartedAt && !stranded.includes(a.id));
      let appliedMs = 0;
      await waitFor(
        async () => {
          const { count } = await finals();
          appliedMs = Date.now() - upAt;
          return ran.every((a) => count.has(a.id));
        },
        { timeoutMs: 60_000, intervalMs: 100, message: 'results from the outage were not applied' },
      );
      await new Promise((r) => setTimeout(r, 3000));
      loading = false;
      await load;

      // Everything accepted ends completed, once; the dead agent's tasks on another agent.
      let final = await finals();
      await waitFor(
        async () => {
          final = await finals();
          return accepted.every((a) => final.count.has(a.id));
        },
        { timeoutMs: 60_000, intervalMs: 250, message: 'a task accepted never ended' },
      );
      const lost = accepted.filter((a) => !final.count.has(a.id)).length;
      const twice = [...final.count.values()].filter((c) => c > 1).length;
      const dead = accepted.filter((a) => !final.by.has(a.id)).length;
      const byAgent: Record<string, number> = {};
      for (const id of acceptedInOutage) {
        const agent = final.by.get(id) ?? 'none';
        byAgent[agent] = (byAgent[agent] ?? 0) + 1;
      }
      const figures = {
        outage_s: OUTAGE_MS / 1000,
        accepted: accepted.length,
        accepted_in_outage: acceptedInOutage.length,
        refused: Object.fromEntries(refused),
        completed: final.by.size,
        dead,
        lost,
        delivered_twice_to_caller: twice,
        stranded_on_dead_agent: stranded.length,
        results_applied_after_return_ms: appliedMs,
        registry_start_ms: upAt - upStartedAt,
        longest_gap_between_completions_in_outage_ms: longestGap(downAt, upStartedAt),
        completed_by_agent_of_outage_tasks: byAgent,
      };
      console.log(`control-plane outage: ${JSON.stringify(figures)}`);

      expect(refused.size).toBe(0);
      expect(lost).toBe(0);
      expect(twice).toBe(0);
      expect(dead).toBe(0);
      expect(appliedMs).toBeLessThan(10_000);
      // The agents last seen HEALTHY kept running tasks throughout the outage.
      for (const id of ['cp-a', 'cp-b', 'cp-http']) expect(byAgent[id] ?? 0).toBeGreaterThan(0);
      expect(finishes.some((f) => f.at > diedAt && f.at < upStartedAt)).toBe(true);
      // The dead agent's tasks were retried: each completed elsewhere.
      for (const id of stranded) expect(final.by.get(id)).not.toBe('cp-dying');
    },
    240_000 + 2 * OUTAGE_MS,
  );
});
