import { waitFor } from '@agent-reach/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isReachHttpError } from '../errors.ts';
import { startHarness, type Harness } from '../testing/harness.ts';
import { startRouterDouble, type RouterDouble } from '../testing/router-double.ts';
import { redisUrl } from '../testing/support.ts';
import type { ReachAgent } from './agent.ts';
import type { TaskContext } from './task.ts';

let h: Harness;
let router: RouterDouble;
let agent: ReachAgent;
/** What each handled task saw, by task_id. */
let seen: Map<string, Pick<TaskContext, 'parentTaskId' | 'hops' | 'traceId'>>;

const AGENT_ID = 'chain-agent';

beforeEach(async () => {
  h = await startHarness();
  seen = new Map();
  router = await startRouterDouble({
    redisUrl: redisUrl(),
    keys: h.registry.keys,
    agentId: AGENT_ID,
    capability: 'echo',
  });
  agent = h.agent({
    agentId: AGENT_ID,
    routerUrl: router.url,
    maxConcurrency: 2,
    handler: async (task) => {
      seen.set(task.taskId, {
        parentTaskId: task.parentTaskId,
        hops: task.hops,
        traceId: task.traceId,
      });
      const p = task.payload as { spawn?: number; capability?: string } | null;
      if (p?.capability !== undefined) {
        try {
          await task.submit({ capability: p.capability, payload: null });
        } catch (err: unknown) {
          return isReachHttpError(err) ? err.code : 'unexpected';
        }
      }
      if (p?.spawn === undefined || p.spawn === 0) return 'leaf';
      const reply = await task.submit({
        task_id: `${task.taskId}.c`,
        capability: 'echo',
        payload: { spawn: p.spawn - 1 },
      });
      return reply.task_id;
    },
  });
  await agent.start().ready();
});

afterEach(async () => {
  await router.close();
  await h.cleanup();
});

function completed(taskId: string): Promise<Record<string, string>> {
  return waitFor(async () => (await h.acksOf(taskId)).find((a) => a['stage'] === 'completed'), {
    message: `${taskId} completed`,
  });
}

describe('tasks submitted while handling another (loop guard)', () => {
  it('exposes parent_task_id and hops of the entry; a caller’s own task has none', async () => {
    await h.addTask(AGENT_ID, { task_id: 'own' });
    await h.addTask(AGENT_ID, { task_id: 'nested', parent_task_id: 'up-there', hops: 3 });
    await completed('own');
    await completed('nested');
    expect(seen.get('own')).toEqual({ parentTaskId: undefined, hops: 0, traceId: 'trace-own' });
    expect(seen.get('nested')).toEqual({
      parentTaskId: 'up-there',
      hops: 3,
      traceId: 'trace-nested',
    });
  });

  it('ctx.submit() posts to routerUrl with parent_task_id and the trace; the children carry them', async () => {
    await h.addTask(AGENT_ID, {
      task_id: 'root',
      trace_id: 'trace-abc',
      payload: JSON.stringify({ spawn: 2 }),
    });
    expect((await completed('root'))['result']).toBe('"root.c"');
    await completed('root.c.c');
    expect(router.submits).toEqual([
      {
        task_id: 'root.c',
        capability: 'echo',
        payload: { spawn: 1 },
        parent_task_id: 'root',
        trace_id: 'trace-abc',
      },
      {
        task_id: 'root.c.c',
        capability: 'echo',
        payload: { spawn: 0 },
        parent_task_id: 'root.c',
        trace_id: 'trace-abc',
      },
    ]);
    expect(seen.get('root.c')).toEqual({ parentTaskId: 'root', hops: 1, traceId: 'trace-abc' });
    expect(seen.get('root.c.c')).toEqual({ parentTaskId: 'root.c', hops: 2, traceId: 'trace-abc' });
  });

  it('ctx.submit() rejects with the router’s error', async () => {
    await h.addTask(AGENT_ID, {
      task_id: 'asks-nobody',
      payload: JSON.stringify({ capability: 'nobody' }),
    });
    expect((await completed('asks-nobody'))['result']).toBe('"NO_AGENT"');
  });
});
