/**
 * Child tasks with the real services: an agent's handler submits a child and awaits
 * `ctx.submit(…).result()` (through the agent's topic, or by the child's state when it names a
 * topic of its own); deadlines cascade over three levels (the parent's less
 * REACH_CHILD_MARGIN_MS, 60 / 55 / 50 / 45 s) and a parent with less than the margin left is
 * refused PARENT_DEADLINE_NEAR; cancelling the parent ends its wait and cancels the child; the
 * task view and the timeline link parent and children both ways; the loop guard still
 * dead-letters a child that only an agent on its trace could run, and `result()` says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isReachHttpError,
  isTaskAbortedError,
  isTaskFailedError,
  ReachClient,
  type ReachAgent,
  type TaskContext,
} from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const MARGIN_MS = 5000;
let stack: Stack;
let client: ReachClient;
const agents: ReachAgent[] = [];

type TaskView = {
  status: string;
  deadline_ms: number;
  parent_task_id?: string;
  children?: string[];
  hops?: number;
  dead_reason?: string;
};

const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;

/** What a child's wait ended with, as a handler reports it. */
function outcomeOf(err: unknown): Record<string, unknown> {
  if (isTaskFailedError(err)) return { failed: err.status, error: err.error };
  if (isTaskAbortedError(err)) return { aborted: err.reason };
  if (isReachHttpError(err)) return { refused: err.code };
  return { unexpected: String(err) };
}

/** Deadlines each `level` task saw, by task_id. */
const deadlines = new Map<string, number>();
/** How each `waiter` task's wait for its child ended, by task_id. */
const waits = new Map<string, Record<string, unknown>>();
/** `hang` tasks whose handler was aborted. */
const hangAborted = new Set<string>();

/** `level` {depth}: submits a `level` child one level less deep and awaits it. */
async function level(t: TaskContext): Promise<unknown> {
  deadlines.set(t.taskId, t.deadlineMs);
  const { depth } = t.payload as { depth: number };
  if (depth === 0) return [t.taskId];
  const below = await t
    .submit({
      task_id: `${t.taskId}.${depth - 1}`,
      capability: 'level',
      payload: { depth: depth - 1 },
    })
    .result<string[]>();
  return [t.taskId, ...below];
}

/** `plan` {n, own_topic?}: doubles n through a `double` child, awaiting its result. */
async function plan(t: TaskContext): Promise<unknown> {
  const { n, own_topic } = t.payload as { n: number; own_topic?: boolean };
  const child = t.submit({
    task_id: `${t.taskId}.double`,
    capability: 'double',
    payload: n,
    ...(own_topic === true ? { callback_topic: 'plan-results' } : {}),
  });
  const reply = await child; // still the submit reply, as before result() existed
  return { submitted: reply.task_id, doubled: await child.result<number>() };
}

/** `waiter` {capability}: awaits a child of that capability and reports how the wait ended. */
async function waiter(t: TaskContext): Promise<unknown> {
  const { capability } = t.payload as { capability: string };
  try {
    const value = await t
      .submit({ task_id: `${t.taskId}.child`, capability, payload: null })
      .result();
    waits.set(t.taskId, { value });
  } catch (err: unknown) {
    waits.set(t.taskId, outcomeOf(err));
  }
  return waits.get(t.taskId);
}

beforeAll(async () => {
  stack = await startStack({ env: { ...FAST_LEASES, REACH_CHILD_MARGIN_MS: String(MARGIN_MS) } });
  client = new ReachClient({ routerUrl: stack.routerUrl });
  const handlers: Record<string, (t: TaskContext) => Promise<unknown>> = {
    level,
    plan,
    waiter,
    // Only this agent serves `selfish`: a child of its own is a loop.
    selfish: waiter,
    double: async (t) => (t.payload as number) * 2,
    hang: (t) =>
      new Promise((_, reject) =>
        t.signal.addEventListener('abort', () => {
          hangAborted.add(t.taskId);
          reject(t.signal.reason as Error);
        }),
      ),
  };
  const serve = (t: TaskContext) => (handlers[t.capability] ?? level)(t);
  // One agent per level: the loop guard never routes a child to an agent already on its trace.
  for (let i = 0; i < 4; i++) agents.push(await startAgent(stack, `lv-${i}`, ['level'], serve));
  agents.push(await startAgent(stack, 'planner', ['plan', 'waiter', 'selfish'], serve));
  agents.push(await startAgent(stack, 'doer', ['double', 'hang'], serve));
});

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

describe('child tasks', () => {
  it('a handler awaits ctx.submit(…).result(); the view and the timeline link parent and child both ways', async () => {
    expect(await client.run('plan', { n: 21 }, { taskId: 'plan-1' })).toEqual({
      submitted: 'plan-1.double',
      doubled: 42,
    });
    // A child with a topic of its own is awaited by its state; its result still reaches that topic.
    expect(await client.run('plan', { n: 5, own_topic: true }, { taskId: 'plan-2' })).toEqual({
      submitted: 'plan-2.double',
      doubled: 10,
    });
    const topic = await http<{ items: { task_id: string; result: unknown }[] }>(
      `${stack.routerUrl}/v1/callbacks/plan-results?after=0`,
    );
    expect(topic.body.items).toEqual([
      expect.objectContaining({ task_id: 'plan-2.double', result: 10 }),
    ]);

    expect(await view('plan-1')).toMatchObject({
      status: 'completed',
      children: ['plan-1.double'],
    });
    expect(await view('plan-1.double')).toMatchObject({ parent_task_id: 'plan-1', hops: 1 });
    const timeline = async (id: string) =>
      (await http<Record<string, unknown>>(`${stack.routerUrl}/v1/tasks/${id}/timeline`)).body;
    expect(await timeline('plan-1')).toMatchObject({ children: ['plan-1.double'] });
    expect(await timeline('plan-1.double')).toMatchObject({ parent_task_id: 'plan-1' });
  });

  it('measures what awaiting a child adds: a plan (parent + child) against its child run alone', async () => {
    const ROUNDS = 50;
    const alone: number[] = [];
    const planned: number[] = [];
    const time = async (into: number[], f: () => Promise<unknown>) => {
      const t0 = performance.now();
      await f();
      into.push(performance.now() - t0);
    };
    // Alternated after a warm-up, so both see the same load on the machine.
    await client.run('plan', { n: 0 });
    for (let i = 0; i < ROUNDS; i++) {
      await time(alone, () => client.run('double', i));
      await time(planned, () => client.run('plan', { n: i }));
    }
    alone.sort((a, b) => a - b);
    planned.sort((a, b) => a - b);
    const p = (xs: number[], q: number) => xs[Math.ceil((q / 100) * xs.length) - 1] ?? NaN;
    console.log(
      `${ROUNDS} runs each: double alone p50 ${p(alone, 50).toFixed(1)} ms p95 ${p(alone, 95).toFixed(1)} ms; ` +
        `plan awaiting a double child p50 ${p(planned, 50).toFixed(1)} ms p95 ${p(planned, 95).toFixed(1)} ms`,
    );
    // One more task's round trip, not a poll interval: well under a second.
    expect(p(planned, 50)).toBeLessThan(p(alone, 50) + 1000);
  });

  it('deadlines cascade over three levels: 60 / 55 / 50 / 45 s', async () => {
    const chain = await client.run<string[]>(
      'level',
      { depth: 3 },
      {
        taskId: 'deep',
        timeoutS: 60,
      },
    );
    expect(chain).toEqual(['deep', 'deep.2', 'deep.2.1', 'deep.2.1.0']);
    const seen = chain.map((id) => deadlines.get(id) ?? 0);
    const root = seen[0] ?? 0;
    expect(root).toBeGreaterThan(Date.now() + 50_000);
    for (let i = 1; i < seen.length; i++) {
      // Each child ends by its parent's deadline less the margin (to the few ms its submission took).
      expect(seen[i]).toBeGreaterThanOrEqual((seen[i - 1] ?? 0) - MARGIN_MS);
      expect(seen[i]).toBeLessThan((seen[i - 1] ?? 0) - MARGIN_MS + 250);
    }
    console.log(
      `deadlines from the root's: ${seen.map((d) => ((root - d) / 1000).toFixed(3)).join(' / ')} s earlier`,
    );
    // Handlers see what the router stored.
    for (const id of chain) expect((await view(id)).deadline_ms).toBe(deadlines.get(id));
  });

  it('a parent with less than the margin left: the child is refused PARENT_DEADLINE_NEAR', async () => {
    const out = await client.run(
      'waiter',
      { capability: 'double' },
      {
        taskId: 'hurried',
        timeoutS: 3,
      },
    );
    expect(out).toEqual({ refused: 'PARENT_DEADLINE_NEAR' });
    expect((await view('hurried')).children).toBeUndefined();
  });

  it('cancelling the parent ends its wait and cancels the child', async () => {
    const sub = await client.submit({
      task_id: 'impatient',
      capability: 'waiter',
      payload: { capability: 'hang' },
    });
    await waitFor(async () => (await view('impatient.child')).status === 'received', {
      message: 'the child never started',
    });
    const res = await http(`${stack.routerUrl}/v1/tasks/${sub.task_id}/cancel`, {
      method: 'POST',
      body: {},
    });
    expect(res.status).toBe(202);
    // The parent's signal aborted: its wait for the child ended with the parent's cancel.
    expect(await waitFor(() => waits.get('impatient'), { message: 'wait not ended' })).toEqual({
      aborted: 'cancelled',
    });
    expect((await view('impatient.child')).status).toBe('cancelled');
    await waitFor(() => hangAborted.has('impatient.child'), {
      message: 'the child’s handler was not aborted',
    });
  });

  it('the loop guard still holds: a child only an agent on its trace serves is dead (loop), and result() says so', async () => {
    const out = await client.run('selfish', { capability: 'selfish' }, { taskId: 'ouroboros' });
    expect(out).toEqual({ failed: 'dead', error: 'loop' });
    expect(await view('ouroboros.child')).toMatchObject({
      status: 'dead',
      dead_reason: 'loop',
      parent_task_id: 'ouroboros',
    });
  });
});
