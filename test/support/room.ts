/**
 * What the waiting-room tests share: caller keys and tenant records made with the admin key,
 * shared agents that log the order they start tasks in, and floods of batch submissions.
 */
import { expect } from 'vitest';
import pino from 'pino';
import { ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { http, type Stack } from './stack.ts';
import { seedNodes } from './redis.ts';

/** A caller key of `tenant`, made with the admin key. */
export async function makeCallerKey(stack: Stack, admin: string, tenant: string): Promise<string> {
  const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body: { tenant, role: 'caller' },
    headers: { authorization: `Bearer ${admin}` },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

/** Sets fields of `tenant`'s record (PUT /v1/tenants/:tenant). */
export async function setTenant(
  stack: Stack,
  admin: string,
  tenant: string,
  body: Record<string, unknown>,
): Promise<void> {
  const res = await http(`${stack.routerUrl}/v1/tenants/${tenant}`, {
    method: 'PUT',
    body,
    headers: { authorization: `Bearer ${admin}` },
  });
  expect(res.status).toBe(200);
}

/** A shared agent of one capability whose handler logs each task's `payload.t` as it starts. */
export interface RoomAgent {
  stack: Stack;
  admin: string;
  capability: string;
  slots: number;
  /** Where the started tasks' `payload.t` go, in order. */
  log: string[];
  /** How long a task runs once started. */
  run: (payload: { t?: string; hold?: boolean }) => Promise<void>;
}

/** Starts a shared agent (registered with the admin key); on the cluster leg, on its seeds. */
export async function startRoomAgent(a: RoomAgent): Promise<ReachAgent> {
  const { stack } = a;
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    ...(stack.redisClusterNodes
      ? { redisConnection: { clusterNodes: seedNodes(stack.redisClusterNodes) } }
      : {}),
    agentId: `${a.capability}-agent`,
    capabilities: [a.capability],
    maxConcurrency: a.slots,
    apiKey: a.admin,
    shared: true,
    handler: async (task: TaskContext) => {
      const payload = (task.payload ?? {}) as { t?: string; hold?: boolean };
      a.log.push(payload.t ?? '');
      await a.run(payload);
      return { ok: true };
    },
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agent.start();
  await agent.ready();
  return agent;
}

type BatchReply = { results: { http_status: number; status?: string; error?: string }[] };

/**
 * Submits `count` tasks with `key` in batches of `size`, each batch to the router `next()` names;
 * returns the statuses answered (or error codes).
 */
export async function flood(
  next: () => string,
  key: string,
  count: number,
  task: (i: number) => Record<string, unknown>,
  size = 500,
): Promise<string[]> {
  const statuses: string[] = [];
  for (let from = 0; from < count; from += size) {
    const tasks = Array.from({ length: Math.min(size, count - from) }, (_, j) => task(from + j));
    const res = await http<BatchReply>(`${next()}/v1/tasks/batch`, {
      body: { tasks },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    statuses.push(...res.body.results.map((i) => i.status ?? i.error ?? String(i.http_status)));
  }
  return statuses;
}

/** Milliseconds as a promise. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
