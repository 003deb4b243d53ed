import { waitFor } from '@agent-reach/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isReachHttpError, isTaskFailedError } from '../errors.ts';
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
    shutdownTimeoutMs: 300,
    handler: async (task) => {
      seen.set(task.taskId, {
        parentTaskId: task.parentTaskId,
        hops: task.hops,
        traceId: task.traceId,
      });
      const p = task.payload as {
        spawn?: number;
        capability?: string;
        await?: boolean;
        hang?: boolean;
        childHangs?: boolean;
      } | null;
      if (p?.hang === true) {
        // Never ends, not even on its signal: no result reaches the topic.
        await new Promise(() => undefined);
      }
      if (p?.await === true) {
        // Submits a child and waits for its result: its value, or the error it ended with.
        try {
          const value = await task
            .submit({
              task_id: `${task.taskId}.c`,
              capability: p.capability ?? 'echo',
              payload: p.childHangs === true ? { hang: true } : null,
            })
            .result();
          return { child: value };
        } catch (err: unknown) {
          if (isTaskFailedError(err)) return { status: err.status, error: err.error };
          return isReachHttpError(err) ? err.code : 'unexpected';
        }
      }
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
    // Without a topic of their own, children go to the agent's, where their results are read.
    const topic = expect.stringMatching(/^children\.[0-9a-f]{16}$/) as unknown;
    expect(router.submits).toEqual([
      {
        task_id: 'root.c',
        capability: 'echo',
        payload: { spawn: 1 },
        parent_task_id: 'root',
        trace_id: 'trace-abc',
        callback_topic: topic,
      },
      {
        task_id: 'root.c.c',
        capability: 'echo',
        payload: { spawn: 0 },
        parent_task_id: 'root.c',
        trace_id: 'trace-abc',
        callback_topic: topic,
      },
    ]);
    expect(seen.get('root.c')).toEqual({ parentTaskId: 'root', hops: 1, traceId: 'trace-abc' });
    expect(seen.get('root.c.c')).toEqual({ parentTaskId: 'root.c', hops: 2, traceId: 'trace-abc' });
  });

  it('await ctx.submit(…).result() resolves with the child’s result, read from the agent’s topic', async () => {
    await h.addTask(AGENT_ID, { task_id: 'waits', payload: JSON.stringify({ await: true }) });
    expect(JSON.parse((await completed('waits'))['result'] ?? '')).toEqual({ child: 'leaf' });
    const [submit] = router.submits;
    expect(router.published(submit?.callback_topic ?? '')).toEqual([
      expect.objectContaining({ task_id: 'waits.c', status: 'completed', result: 'leaf' }),
    ]);
  });

  it('.result() rejects with TaskFailedError when the child is dead-lettered, with the submit error when refused', async () => {
    router.deadLetterNext('loop');
    await h.addTask(AGENT_ID, { task_id: 'dies', payload: JSON.stringify({ await: true }) });
    expect(JSON.parse((await completed('dies'))['result'] ?? '')).toEqual({
      status: 'dead',
      error: 'loop',
    });
    await h.addTask(AGENT_ID, {
      task_id: 'refused',
      payload: JSON.stringify({ await: true, capability: 'nobody' }),
    });
    expect((await completed('refused'))['result']).toBe('"NO_AGENT"');
  });

  it('closing the agent ends a handler’s wait for a child, and the long poll with it', async () => {
    await h.addTask(AGENT_ID, {
      task_id: 'stuck',
      payload: JSON.stringify({ await: true, childHangs: true }),
    });
    await waitFor(() => router.polls.open > 0, { message: 'no long poll for the child' });
    await agent.close();
    await waitFor(() => router.polls.open === 0, {
      timeoutMs: 2000,
      message: 'the long poll outlived the agent',
    });
  });

  it('ctx.submit() rejects with the router’s error', async () => {
    await h.addTask(AGENT_ID, {
      task_id: 'asks-nobody',
      payload: JSON.stringify({ capability: 'nobody' }),
    });
    expect((await completed('asks-nobody'))['result']).toBe('"NO_AGENT"');
  });
});
