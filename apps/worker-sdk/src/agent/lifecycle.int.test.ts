import { WORKER_GROUP } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { isAgentFencedError, isReachHttpError, type AgentFencedError } from '../errors.ts';
import { startHarness, type Harness } from '../testing/harness.ts';
import { Gate, pendingCount } from '../testing/support.ts';
import type { AgentState } from './agent.ts';

/** The runtime figures every heartbeat carries (runtime-figures.ts). */
const RUNTIME = {
  loop_lag_p99_ms: expect.any(Number),
  gc_share: expect.any(Number),
  rss_bytes: expect.any(Number),
};

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('registration', () => {
  it('retries in the background with the same instance_id until the registry answers', async () => {
    h = await startHarness();
    h.registry.failRegistrations(3);
    const agent = h.agent({ handler: () => Promise.resolve(1) });
    const states: AgentState[] = [];
    agent.on('state', (s) => states.push(s));
    agent.start();
    expect(agent.state).toBe('starting');
    const reg = await agent.ready();
    expect(h.registry.registers).toHaveLength(4);
    expect(new Set(h.registry.registers.map((r) => r.instance_id))).toEqual(
      new Set([agent.options.instanceId]),
    );
    expect(reg.instance_id).toBe(agent.options.instanceId);
    expect(states).toEqual(['running']);
  });

  it('gives up on a request the registry refuses for good: ready() rejects, the agent closes', async () => {
    h = await startHarness();
    h.registry.refuseRegistrations('INVALID_BODY');
    const agent = h.agent({ handler: () => Promise.resolve(1) });
    agent.start();
    const err: unknown = await agent.ready().catch((e: unknown) => e);
    expect(isReachHttpError(err) && err.code === 'INVALID_BODY' && err.status === 400).toBe(true);
    await waitFor(() => agent.state === 'closed');
    expect(h.registry.registers).toHaveLength(1);
  });

  it('close() while still registering ends cleanly', async () => {
    h = await startHarness();
    h.registry.failRegistrations(1_000_000);
    const agent = h.agent({ handler: () => Promise.resolve(1) });
    agent.start();
    await waitFor(() => h!.registry.registers.length >= 2);
    await agent.close();
    expect(agent.state).toBe('closed');
    await expect(agent.ready()).rejects.toMatchObject({ name: 'ReachClosedError' });
    expect(h.registry.deregisters).toEqual([]);
  });
});

describe('heartbeat', () => {
  it('beats on its own timer with the inflight count and busy/idle', async () => {
    h = await startHarness({ heartbeatIntervalMs: 40 });
    const gate = new Gate();
    const agent = h.agent({ maxConcurrency: 1, handler: () => gate.promise.then(() => 'ok') });
    const reg = await agent.start().ready();
    await waitFor(() => h!.registry.heartbeats.filter((b) => b.body.inflight === 0).length >= 2, {
      message: 'idle beats',
    });
    expect(h.registry.heartbeats[0]).toEqual({
      agentId: reg.agent_id,
      body: { inflight: 0, status: 'idle', runtime: RUNTIME },
    });
    await h.addTask(reg.agent_id, { task_id: 'hold' });
    await waitFor(
      () => h!.registry.heartbeats.some((b) => b.body.inflight === 1 && b.body.status === 'busy'),
      { message: 'busy beat' },
    );
    gate.open();
    await h.waitForAcks('hold', 2);
  });

  it('re-registers (same instance) when the record is gone, keeping in-flight work', async () => {
    h = await startHarness({ heartbeatIntervalMs: 40 });
    const gate = new Gate();
    const agent = h.agent({ maxConcurrency: 2, handler: () => gate.promise.then(() => 'kept') });
    const registered: number[] = [];
    agent.on('registered', (r) => registered.push(r.epoch));
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'across' });
    await h.waitForAcks('across', 1);
    h.registry.forget(reg.agent_id);
    await waitFor(() => h!.registry.registers.length === 2, { message: 're-registered' });
    expect(h.registry.registers[1]?.instance_id).toBe(agent.options.instanceId);
    gate.open();
    expect((await h.waitForAcks('across', 2))[1]).toMatchObject({
      stage: 'completed',
      result: '"kept"',
    });
    const beats = h.registry.heartbeats.length;
    await waitFor(() => h!.registry.heartbeats.length > beats + 1, {
      message: 'heartbeats resumed',
    });
    expect(agent.state).toBe('running');
    expect(registered).toHaveLength(2);
  });

  it('409 STALE_EPOCH fences: stops reading and beating; in-flight acks keep the old epoch', async () => {
    h = await startHarness({ heartbeatIntervalMs: 40 });
    const gate = new Gate();
    const agent = h.agent({ maxConcurrency: 2, handler: () => gate.promise.then(() => 'late') });
    const fenced: AgentFencedError[] = [];
    agent.on('fenced', (e) => fenced.push(e));
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'old-epoch' });
    await h.waitForAcks('old-epoch', 1);

    const newer = h.registry.takeOver(reg.agent_id);
    expect(newer.epoch).toBe(reg.epoch + 1);
    await waitFor(() => agent.state === 'fenced', { message: 'fenced' });
    expect(fenced).toHaveLength(1);
    expect(isAgentFencedError(fenced[0]) && fenced[0].epoch === reg.epoch).toBe(true);

    gate.open();
    const acks = await h.waitForAcks('old-epoch', 2);
    expect(acks[1]).toMatchObject({ stage: 'completed', epoch: String(reg.epoch) });
    await agent.close();
    expect(agent.state).toBe('closed');
    // A fenced instance never re-registers (that would take the agent back) nor deregisters.
    expect(h.registry.registers).toHaveLength(1);
    expect(h.registry.deregisters).toEqual([]);
    await h.addTask(reg.agent_id, { task_id: 'after-fence' });
    expect(await h.acksOf('after-fence')).toEqual([]);
  });
});

describe('Redis trouble', () => {
  it('survives its connections being killed', async () => {
    h = await startHarness();
    const agent = h.agent({ blockMs: 100, handler: (t) => Promise.resolve(t.taskId) });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'before' });
    await h.waitForAcks('before', 2);
    // Only this agent's connections: other test files share the server.
    const list = (await h.redis.client('LIST')) as string;
    const ids = list
      .split('\n')
      .filter((line) => line.includes(` name=reach:${reg.agent_id}:`))
      .map((line) => /^id=(\d+)/.exec(line)?.[1] ?? '');
    expect(ids).toHaveLength(2);
    for (const id of ids) await h.redis.client('KILL', 'ID', id);
    await h.addTask(reg.agent_id, { task_id: 'after' });
    expect((await h.waitForAcks('after', 2))[1]).toMatchObject({
      stage: 'completed',
      result: '"after"',
    });
    expect(agent.state).toBe('running');
  });

  it('re-registers when the stream’s group is gone (Redis lost its data), then reads again', async () => {
    h = await startHarness();
    const agent = h.agent({ blockMs: 100, handler: (t) => Promise.resolve(t.taskId) });
    const reg = await agent.start().ready();
    await h.redis.xgroup('DESTROY', reg.stream, WORKER_GROUP);
    await waitFor(() => h!.registry.registers.length === 2, {
      message: 're-registered after NOGROUP',
    });
    await h.addTask(reg.agent_id, { task_id: 'regrouped' });
    expect((await h.waitForAcks('regrouped', 2))[1]).toMatchObject({ stage: 'completed' });
  });

  it('a restart with the same instance_id finishes what it had read and never acknowledged', async () => {
    h = await startHarness();
    const agentId = 'agent-restarted';
    const stream = h.registry.keys.inbox(agentId);
    await h.redis.xgroup('CREATE', stream, WORKER_GROUP, '$', 'MKSTREAM');
    // By hand: delivered to the previous life, whose record is gone.
    await h.addEntryByHand(agentId, { task_id: 'orphan', payload: '"again"' });
    // The previous life of this instance read it, then died.
    await h.redis.xreadgroup(
      'GROUP',
      WORKER_GROUP,
      'inst-fixed',
      'COUNT',
      10,
      'STREAMS',
      stream,
      '>',
    );
    expect(await pendingCount(h.redis, stream, WORKER_GROUP)).toBe(1);

    const agent = h.agent({
      agentId,
      instanceId: 'inst-fixed',
      handler: (t) => Promise.resolve(t.payload),
    });
    await agent.start().ready();
    expect((await h.waitForAcks('orphan', 2))[1]).toMatchObject({
      stage: 'completed',
      result: '"again"',
      instance_id: 'inst-fixed',
    });
    await waitFor(async () => (await pendingCount(h!.redis, stream, WORKER_GROUP)) === 0);
  });
});
