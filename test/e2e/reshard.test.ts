/**
 * Resharding under traffic (cluster leg only): tasks flow to four SDK agents while the hash slots
 * of two agents' keys (inbox, pending, leases, agent hash) move to another master, key by key.
 * Routers, registry-sync and the agents meet ASK while a slot is half-moved and MOVED after it;
 * every accepted task must complete, with exactly one completion on its callback topic, and the
 * moved agents must go on completing tasks from their inboxes' new master.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { parseClusterNodes, testServices, waitFor } from '@agent-reach/testkit';
import { agentLogTail, startAgent } from '../support/agents.ts';
import { CallbackWatcher } from '../support/chaos/callbacks.ts';
import { SubmitDriver } from '../support/chaos/driver.ts';
import { CHAOS_CAPABILITY } from '../support/chaos/exec-log.ts';
import { connectRedis, seedNodes, type TestRedis } from '../support/redis.ts';
import { migrateSlot, ownerOf, type SlotMove } from '../support/reshard.ts';
import { FAST_LEASES, http, lastLines, startStack, type Stack } from '../support/stack.ts';

const onCluster = Boolean(testServices().redisClusterNodes);
const AGENTS = ['rs-0', 'rs-1', 'rs-2', 'rs-3'];
/** The agents whose slots move. */
const MOVED = ['rs-0', 'rs-1'];
const TOPICS = ['rs-a', 'rs-b'];

let stack: Stack;
let redis: TestRedis;
const agents: ReachAgent[] = [];
/** Each handler run: agent, task and when it finished. */
const runs: { agent: string; task: string; at: number }[] = [];

beforeAll(async () => {
  if (!onCluster) return;
  stack = await startStack({ env: { ...FAST_LEASES, REACH_RETRY_BASE_MS: '100' } });
  redis = connectRedis(stack);
  for (const id of AGENTS) {
    agents.push(
      await startAgent(
        stack,
        id,
        [CHAOS_CAPABILITY],
        async (t) => {
          await new Promise((resolve) => setTimeout(resolve, 5 + (t.attempt % 3) * 5));
          runs.push({ agent: id, task: t.taskId, at: Date.now() });
          return t.payload;
        },
        { maxConcurrency: 8 },
      ),
    );
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await redis?.quit();
  await stack?.stop();
});

/** The cluster's view of itself, from the first seed. */
async function clusterView() {
  const seed = seedNodes(stack.redisClusterNodes)[0]!;
  const conn = new Redis(seed.port, seed.host);
  try {
    return parseClusterNodes(String(await conn.call('CLUSTER', 'NODES')));
  } finally {
    conn.disconnect();
  }
}

/** How the submissions ended so far and the services' last lines, for a failure message. */
function servicesSaid(driver: SubmitDriver): string {
  return [
    `tries by outcome: ${JSON.stringify(driver.tries)}`,
    `router:\n${lastLines(stack.router.output(), 15)}`,
    `registry-sync:\n${lastLines(stack.registry.output(), 15)}`,
  ].join('\n');
}

describe.runIf(onCluster)('resharding a slot that holds live inboxes', () => {
  it('moves two agents’ slots to another master while tasks flow: none lost, none completed twice', async () => {
    const keys = stack.keys;
    const routers = [stack.routerUrl];
    const watcher = new CallbackWatcher(routers, TOPICS);
    watcher.start();
    const driver = new SubmitDriver({
      routers,
      total: 2000,
      ratePerS: 40,
      maxInFlight: 8,
      topics: TOPICS,
      idPrefix: `rs-${Date.now().toString(36)}`,
      giveUpMs: 30_000,
      requestTimeoutMs: 5000,
    });
    const driving = driver.run();
    await waitFor(() => driver.accepted().length >= 60, {
      timeoutMs: 20_000,
      message: 'the first 60 tasks accepted',
    }).catch((err: unknown) => {
      driver.stop();
      throw new Error(`${String(err)}; ${servicesSaid(driver)}`, { cause: err });
    });

    // One slot after the other, each to a master that does not hold it.
    const moves: SlotMove[] = [];
    for (const agentId of MOVED) {
      const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', keys.inbox(agentId)));
      const view = await clusterView();
      const from = ownerOf(view, slot);
      const masters = view.filter((n) => n.role === 'master');
      const to = masters.find((n) => n.id !== from.id)!;
      const acceptedBefore = driver.accepted().length;
      moves.push(await migrateSlot(slot, from, to, masters));
      expect(ownerOf(await clusterView(), slot).port).toBe(to.port);
      // Tasks were accepted while the slot was half-moved.
      expect(driver.accepted().length).toBeGreaterThan(acceptedBefore);
    }
    const movedAt = Date.now();
    // Traffic goes on after the moves, until each moved agent has run tasks from its new master.
    await waitFor(
      () =>
        MOVED.every((a) => runs.filter((r) => r.agent === a && r.at > movedAt).length >= 5) &&
        driver.accepted().length >= 300,
      { timeoutMs: 30_000, message: 'the moved agents complete tasks after their slots moved' },
    ).catch((err: unknown) => {
      driver.stop();
      const after = AGENTS.map(
        (a) => `${a}: ${runs.filter((r) => r.agent === a && r.at > movedAt).length}`,
      );
      throw new Error(
        `${String(err)}; runs after the moves ${after.join(', ')}; accepted ${driver.accepted().length}; ${servicesSaid(driver)}\n` +
          MOVED.map((a, i) => `${a}:\n${agentLogTail(agents[i]!)}`).join('\n'),
        { cause: err },
      );
    });
    driver.stop();
    await driving;
    // A submission cut short by stop() is sent again with its task_id until accepted, as a
    // caller would; one that reached Redis before its reply was lost answers 200.
    const cut = driver.submissions.filter((x) => x.acceptedAt === undefined);
    for (const sub of cut) {
      await waitFor(
        async () => {
          const i = Number(sub.task_id.slice(sub.task_id.lastIndexOf('-') + 1));
          const res = await http(`${stack.routerUrl}/v1/tasks`, {
            body: {
              task_id: sub.task_id,
              capability: CHAOS_CAPABILITY,
              payload: { i },
              callback_topic: sub.topic,
            },
          });
          if (res.status !== 200 && res.status !== 202) return false;
          sub.acceptedAt = Date.now();
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 200, message: `${sub.task_id} accepted when sent again` },
      );
    }

    const accepted = driver.accepted();
    const given = driver.submissions.length - accepted.length;
    // What the router logged as errors (beyond NO_AGENT), by the error's first word.
    const routerErrors: Record<string, number> = {};
    for (const line of stack.router.output().split('\n')) {
      const m = /"level":50.*?"message":"(\S+)/.exec(line);
      if (m?.[1] && !line.includes('NO_AGENT')) routerErrors[m[1]] = (routerErrors[m[1]] ?? 0) + 1;
    }
    await waitFor(() => accepted.every((s) => watcher.isFinal(s.task_id)), {
      timeoutMs: 60_000,
      intervalMs: 200,
      message: 'every accepted task final on its callback topic',
    }).catch(() => undefined);
    await watcher.stop();

    const completions = accepted.map(
      (s) => (watcher.byTask.get(s.task_id) ?? []).filter((x) => x.status === 'completed').length,
    );
    const lost = completions.filter((n) => n === 0).length;
    const duplicates = completions.filter((n) => n > 1).length;
    const executions = new Map<string, number>();
    for (const r of runs) executions.set(r.task, (executions.get(r.task) ?? 0) + 1);
    const figures = {
      accepted: accepted.length,
      given_up: given,
      sent_again_after_stop: cut.length,
      completed: completions.filter((n) => n === 1).length,
      lost,
      duplicate_completions: duplicates,
      executed_twice: [...executions.values()].filter((n) => n > 1).length,
      tries: driver.tries,
      router_errors: routerErrors,
      moves: moves.map((m) => ({
        slot: m.slot,
        from: m.from,
        to: m.to,
        keys: m.keys,
        ms: m.endedAt - m.startedAt,
      })),
      after_move: Object.fromEntries(
        MOVED.map((a) => [a, runs.filter((r) => r.agent === a && r.at > movedAt).length]),
      ),
    };
    console.log(`reshard: ${JSON.stringify(figures)}`);
    expect(given).toBe(0);
    expect(lost).toBe(0);
    expect(duplicates).toBe(0);
    for (const m of moves) expect(m.keys).toBeGreaterThan(0);
  }, 150_000);
});
