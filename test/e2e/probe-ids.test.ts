/**
 * No task id is reserved: a caller's task whose task_id starts with `probe:` goes through the
 * real router and registry-sync to a worker-sdk agent and completes with its callback, while
 * registry-sync's own liveness probes (known by the mark on their pending entry) keep being
 * answered beside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { type CallbacksReply } from '@agent-reach/protocol';
import pino from 'pino';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let redis: Redis;
let agent: ReachAgent | undefined;
const handled: string[] = [];
/** Task ids of the probes the agent answered (it logs each at debug level). */
const probesAnswered: string[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { ...FAST_LEASES, REACH_PROBE_MS: '200' } });
  redis = new Redis(stack.redisUrl);
  const logger = pino(
    { level: 'debug' },
    {
      write: (line: string) => {
        const entry = JSON.parse(line) as { msg?: string; task_id?: string };
        if (entry.msg === 'answering liveness probe' && entry.task_id)
          probesAnswered.push(entry.task_id);
      },
    },
  );
  agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId: 'probe-ids-1',
    capabilities: ['probe-ids'],
    maxConcurrency: 4,
    handler: (task) => {
      handled.push(task.taskId);
      return Promise.resolve({ echoed: task.payload });
    },
    shutdownTimeoutMs: 2000,
    logger,
  });
  await agent.start().ready();
});

afterAll(async () => {
  await agent?.close();
  await redis?.quit();
  await stack?.stop();
});

describe('a caller task whose task_id starts with probe:', () => {
  it('is run by the agent and completes with its callback, while real probes are answered beside it', async () => {
    const keys = stack.keys;
    // A real probe of this agent, answered, and its slot freed by registry-sync.
    const probeId = await waitFor(() => probesAnswered[0], {
      message: 'a liveness probe answered',
      timeoutMs: 10_000,
    });
    expect(probeId).toMatch(/^probe:probe-ids-1:/);
    await waitFor(async () => !(await redis.hexists(keys.pending('probe-ids-1'), probeId)), {
      message: 'the probe’s slot freed',
    });

    const submitted = await http(`${stack.routerUrl}/v1/tasks`, {
      body: {
        task_id: 'probe:x',
        capability: 'probe-ids',
        payload: { n: 1 },
        callback_topic: 'probe-ids-results',
      },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body).toMatchObject({ task_id: 'probe:x', agent_id: 'probe-ids-1' });

    const callback = await http<CallbacksReply>(
      `${stack.routerUrl}/v1/callbacks/probe-ids-results?wait_ms=10000`,
    );
    expect(callback.body.items).toMatchObject([
      {
        task_id: 'probe:x',
        status: 'completed',
        agent_id: 'probe-ids-1',
        result: { echoed: { n: 1 } },
      },
    ]);
    const view = await http(`${stack.routerUrl}/v1/tasks/probe:x`);
    expect(view.body).toMatchObject({ status: 'completed', agent_id: 'probe-ids-1' });
    expect(handled).toEqual(['probe:x']);
    // Its slot is free, and no ack was refused on the way (probes' included).
    await waitFor(async () => !(await redis.hexists(keys.pending('probe-ids-1'), 'probe:x')));
    const refused = Object.keys(await redis.hgetall(keys.stats())).filter((k) =>
      k.startsWith('acks_refused:'),
    );
    expect(refused).toEqual([]);
  });
});
