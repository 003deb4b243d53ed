/**
 * An operator drains an SDK agent (`POST /v1/agents/:id/drain` through the router): the task it
 * holds finishes there (its Redis user, REACH_AGENT_ACL=on, lasts until the agent is removed, so
 * its acks are taken), it gets no new one, and once registry-sync removed it the agent closes
 * rather than registering again; an idle one too (the drain keeps its record a lease long, so a
 * heartbeat tells it). Another agent of the capability takes the new tasks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReachAgent, TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { agentLogTail, startAgent } from '../support/agents.ts';
import { FAST_LEASES, http, lastLines, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
const agents: ReachAgent[] = [];
let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});

beforeAll(async () => {
  // The drain holds an idle agent's record one offline bound long: the agent hears of the drain
  // only from a heartbeat answered within it. FAST_LEASES' 2 s can pass without one on a loaded
  // machine (the agents run in the test's own process); then the record is gone first and the
  // agent registers again. 5 s leaves room for 25 heartbeats.
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_OFFLINE_MS: '5000', REACH_AGENT_ACL: 'on' },
  });
}, 90_000);

afterAll(async () => {
  release();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

const agentRecord = (id: string) =>
  http<{ status: string }>(`${stack.registryUrl}/v1/agents/${id}`, { method: 'GET' });

/**
 * Waits for a drained agent to close; a failure says its state, what the registry holds of it,
 * its last log lines (first: the CI recap shows a failure's first lines) and the services'.
 */
async function closes(agent: ReachAgent): Promise<void> {
  await waitFor(() => agent.state === 'closed' || undefined, { timeoutMs: 20_000 }).catch(
    async (err: unknown) => {
      const record = await agentRecord(agent.options.agentId);
      throw new Error(
        `${String(err)}; state ${agent.state}; registry ${record.status} ${JSON.stringify(record.body)}; ` +
          `agent:\n${agentLogTail(agent)}\n` +
          `router:\n${lastLines(stack.router.output(), 8)}\n` +
          `registry-sync:\n${lastLines(stack.registry.output(), 8)}`,
        { cause: err },
      );
    },
  );
}

describe('an operator drain', () => {
  it('lets the agent finish its task, then the agent closes instead of registering again', async () => {
    const ran: Record<string, string[]> = { 'drain-a': [], 'drain-b': [] };
    const handler = (id: string) => async (task: TaskContext) => {
      ran[id]!.push(task.taskId);
      if ((task.payload as { hold?: boolean }).hold) await held;
      return { by: id };
    };
    const a = await startAgent(stack, 'drain-a', ['drainable'], handler('drain-a'));
    agents.push(a);
    let drainedEvents = 0;
    a.on('drained', () => (drainedEvents += 1));

    const first = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: 'held-1', capability: 'drainable', payload: { hold: true } },
    });
    expect(first.status).toBe(202);
    await waitFor(() => ran['drain-a']!.includes('held-1') || undefined, { timeoutMs: 10_000 });

    const drain = await http<{ status: string }>(`${stack.routerUrl}/v1/agents/drain-a/drain`, {
      body: {},
    });
    expect(drain.status, JSON.stringify(drain.body)).toBe(200);
    expect(drain.body.status).toBe('DRAINING');
    await waitFor(() => drainedEvents === 1 || undefined, { timeoutMs: 10_000 });

    // New tasks go to another agent of the capability.
    const b = await startAgent(stack, 'drain-b', ['drainable'], handler('drain-b'));
    agents.push(b);
    const next = await http(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: 'after-drain', capability: 'drainable', payload: {} },
    });
    expect(next.status).toBe(202);
    await waitFor(() => ran['drain-b']!.includes('after-drain') || undefined, {
      timeoutMs: 10_000,
    });

    // Past two ACL sweeps (every second), the held task completes on the drained agent; then the
    // registry removes it and it closes.
    await new Promise((r) => setTimeout(r, 2500));
    release();
    const done = await waitFor(
      async () => {
        const view = await http<{ status: string; agent_id: string; attempts: number }>(
          `${stack.routerUrl}/v1/tasks/held-1`,
          { method: 'GET' },
        );
        return view.body.status === 'completed' ? view.body : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(done).toMatchObject({ agent_id: 'drain-a', attempts: 1 });
    await closes(a);
    expect(ran['drain-a']).toEqual(['held-1']);
    // Closed, it did not come back: the registry has no record of it.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await agentRecord('drain-a')).status).toBe(404);
    expect(drainedEvents).toBe(1);
  }, 60_000);

  it('closes an idle agent too, once a heartbeat told it', async () => {
    const c = await startAgent(stack, 'drain-c', ['drainable'], () => Promise.resolve({}));
    agents.push(c);
    const drain = await http(`${stack.routerUrl}/v1/agents/drain-c/drain`, { body: {} });
    expect(drain.status).toBe(200);
    await closes(c);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await agentRecord('drain-c')).status).toBe(404);
  }, 30_000);
});
