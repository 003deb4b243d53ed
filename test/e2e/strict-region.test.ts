/**
 * A strict-region task waits for an agent of its region rather than go elsewhere: it fails on
 * its only `eu` agent, which then leaves; while it waits (`retry_wait`, visible through the API)
 * the live `us` agent never gets it, whatever registry-sync's retry sweeps try; an `eu` agent that
 * registers later completes it, and its result reaches its topic once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { waitFor } from '@agent-reach/testkit';
import { FaultWorker } from '../support/fault-worker.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let redis: Redis;
const workers: FaultWorker[] = [];

type TaskView = {
  status: string;
  agent_id: string;
  attempts: number;
  timeline: { stage: string; agent_id?: string; reason?: string }[];
};

beforeAll(async () => {
  stack = await startStack({
    env: {
      ...FAST_LEASES,
      REACH_RETRY_BASE_MS: '100',
      REACH_RETRY_CAP_MS: '400',
      REACH_MAX_ATTEMPTS: '10',
      REACH_RECEIPT_TIMEOUT_MS: '1000',
      // A retry that finds no agent of its region waits this long before it is dead-lettered:
      // far longer than the test.
      REACH_NO_AGENT_WAIT_MS: '120000',
    },
  });
  redis = new Redis(stack.redisUrl);
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await redis?.quit();
  await stack?.stop();
});

const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;

async function worker(
  agentId: string,
  capability: string,
  region: string,
  mode: 'complete' | 'fail' = 'complete',
): Promise<FaultWorker> {
  const w = await FaultWorker.start({
    registryUrl: stack.registryUrl,
    redisUrl: stack.redisUrl,
    agentId,
    capabilities: [capability],
    region,
    mode,
  });
  workers.push(w);
  return w;
}

describe('a strict-region task', () => {
  it.each([
    ['deregisters', (w: FaultWorker) => w.drain()],
    ['stops without a word', (w: FaultWorker) => w.kill()],
  ] as const)(
    'waits for its region when its only agent there fails it and %s, and never goes to the live agent elsewhere',
    async (how, leave) => {
      const cap = how === 'deregisters' ? 'geo-drain' : 'geo-kill';
      const topic = `${cap}-results`;
      const us = await worker(`${cap}-us-1`, cap, 'us');
      const eu = await worker(`${cap}-eu-1`, cap, 'eu', 'fail');

      const sub = await http<{ task_id: string; agent_id: string }>(`${stack.routerUrl}/v1/tasks`, {
        body: {
          capability: cap,
          payload: { n: 1 },
          region: 'eu',
          region_policy: 'strict',
          callback_topic: topic,
        },
      });
      expect(sub.status).toBe(202);
      const taskId = sub.body.task_id;
      expect(sub.body.agent_id).toBe(eu.agentId);
      await waitFor(() => eu.reads.some((r) => r.taskId === taskId), {
        message: 'the eu agent never read the task',
      });
      await leave(eu);

      // The retries find no agent of eu: the task waits, visibly, while the us agent is live.
      // Each sweep that finds no agent for it moves its due entry on: wait for three of those
      // in a row (a killed agent may still be sent a retry until it is OFFLINE).
      const keys = stack.keys;
      const tries = new Set<string>();
      await waitFor(
        async () => {
          const [v, due] = await Promise.all([view(taskId), redis.zscore(keys.due(), taskId)]);
          if (v.status !== 'retry_wait') tries.clear();
          else if (due) tries.add(due);
          return tries.size >= 3;
        },
        { timeoutMs: 15_000, message: 'the task did not wait for an agent of its region' },
      );
      const waiting = await view(taskId);
      expect(waiting.status).toBe('retry_wait');
      // The us agent was there to take it all along: it takes an unconstrained task at once.
      const other = await http<{ agent_id: string }>(`${stack.routerUrl}/v1/tasks`, {
        body: { capability: cap, payload: { n: 2 } },
      });
      expect(other.status).toBe(202);
      expect(other.body.agent_id).toBe(us.agentId);

      const later = await worker(`${cap}-eu-2`, cap, 'eu');
      const done = await waitFor(
        async () => {
          const v = await view(taskId);
          return v.status === 'completed' ? v : undefined;
        },
        { timeoutMs: 8000, message: 'the task did not complete on the eu agent that came' },
      );
      expect(done.agent_id).toBe(later.agentId);
      const named = new Set(done.timeline.flatMap((e) => (e.agent_id ? [e.agent_id] : [])));
      expect([...named].sort()).toEqual([eu.agentId, later.agentId].sort());
      expect(us.readIds()).not.toContain(taskId);
      expect(later.reads.filter((r) => r.taskId === taskId)).toHaveLength(1);

      const items = await waitFor(
        async () => {
          const res = await http<{ items: { task_id: string; status: string }[] }>(
            `${stack.routerUrl}/v1/callbacks/${topic}?wait_ms=1000`,
          );
          return res.body.items.length > 0 ? res.body.items : undefined;
        },
        { message: 'no result on the topic' },
      );
      expect(items).toEqual([expect.objectContaining({ task_id: taskId, status: 'completed' })]);
    },
  );
});
