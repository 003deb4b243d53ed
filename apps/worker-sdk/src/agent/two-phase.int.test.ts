import { WORKER_GROUP } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../testing/harness.ts';
import { pendingCount } from '../testing/support.ts';

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

/** Long enough that a heartbeat seen in a test was sent at once, not by the timer. */
const NO_TIMER_MS = 60_000;

describe('two-phase start (ready: false)', () => {
  it('registers STARTING and reads nothing until markReady()', async () => {
    h = await startHarness({ heartbeatIntervalMs: 40 });
    const ran: string[] = [];
    const agent = h.agent({
      ready: false,
      handler: (t) => (ran.push(t.taskId), Promise.resolve(t.taskId)),
    });
    const reg = await agent.start().ready();
    expect(h.registry.registers[0]?.ready).toBe(false);
    expect(h.registry.statusOf(reg.agent_id)).toBe('STARTING');
    expect(agent.state).toBe('starting');

    // By hand: the delivery refuses a STARTING agent; an earlier life's entry can be waiting.
    await h.addEntryByHand(reg.agent_id, { task_id: 'early' });
    // Three beats' time: a reading agent would have taken the task long before.
    await waitFor(() => h!.registry.heartbeats.length >= 3, { message: 'three heartbeats' });
    expect(h.registry.heartbeats.every((b) => b.body.ready === undefined)).toBe(true);
    expect(await h.acksOf('early')).toEqual([]);
    expect(await pendingCount(h.redis, reg.stream, WORKER_GROUP)).toBe(0);
    expect(ran).toEqual([]);

    await expect(agent.markReady()).resolves.toBe(true);
    expect(agent.state).toBe('running');
    expect(h.registry.statusOf(reg.agent_id)).toBe('HEALTHY');
    await waitFor(async () => (await h!.acksOf('early')).length === 2, {
      message: 'early task run once ready',
    });
    expect(ran).toEqual(['early']);
    // Every later beat says ready.
    const told = h.registry.heartbeats.findIndex((b) => b.body.ready === true);
    await waitFor(() => h!.registry.heartbeats.length >= told + 3, { message: 'later heartbeats' });
    expect(h.registry.heartbeats.slice(told).every((b) => b.body.ready === true)).toBe(true);
  });

  it('markReady() tells the registry at once with a heartbeat carrying ready: true', async () => {
    h = await startHarness({ heartbeatIntervalMs: NO_TIMER_MS });
    const agent = h.agent({ ready: false, handler: () => Promise.resolve(null) });
    const reg = await agent.start().ready();
    expect(h.registry.heartbeats).toEqual([]);
    await expect(agent.markReady()).resolves.toBe(true);
    expect(h.registry.heartbeats).toEqual([
      {
        agentId: reg.agent_id,
        body: { inflight: 0, status: 'idle', ready: true, runtime: RUNTIME },
      },
    ]);
    expect(h.registry.statusOf(reg.agent_id)).toBe('HEALTHY');
    expect(agent.markReady()).toBe(agent.markReady()); // same answer every call
  });

  it('markReady() while the registration is in flight: that registration said false, so a beat follows at once', async () => {
    h = await startHarness({ heartbeatIntervalMs: NO_TIMER_MS });
    const agent = h.agent({ ready: false, handler: () => Promise.resolve(null) });
    agent.start();
    const told = agent.markReady();
    await expect(told).resolves.toBe(true);
    expect(h.registry.registers.map((r) => r.ready)).toEqual([false]);
    expect(h.registry.heartbeats.map((b) => b.body.ready)).toEqual([true]);
    expect(h.registry.statusOf(agent.options.agentId)).toBe('HEALTHY');
    expect(agent.state).toBe('running');
  });

  it('markReady() between registration attempts: the next attempt registers as ready', async () => {
    h = await startHarness({ heartbeatIntervalMs: NO_TIMER_MS });
    h.registry.failRegistrations(1_000_000);
    const agent = h.agent({ ready: false, handler: () => Promise.resolve(null) });
    agent.start();
    await waitFor(() => h!.registry.registers.length >= 1, { message: 'an attempt refused' });
    expect(h.registry.registers[0]?.ready).toBe(false);
    const told = agent.markReady();
    // Attempts run one after another: once one says ready, every later one does.
    await waitFor(() => h!.registry.registers.at(-1)?.ready === undefined, {
      message: 'an attempt built after markReady()',
    });
    h.registry.failRegistrations(0);
    await expect(told).resolves.toBe(true);
    const sent = h.registry.registers.map((r) => r.ready);
    const first = sent.indexOf(undefined);
    expect(sent.slice(0, first).every((r) => r === false)).toBe(true);
    expect(sent.slice(first).every((r) => r === undefined)).toBe(true);
    expect(h.registry.heartbeats).toEqual([]);
    expect(h.registry.statusOf(agent.options.agentId)).toBe('HEALTHY');
  });

  it('a re-registration after 404 keeps the readiness the agent had', async () => {
    h = await startHarness({ heartbeatIntervalMs: 40 });
    const agent = h.agent({ ready: false, handler: () => Promise.resolve(null) });
    const reg = await agent.start().ready();
    h.registry.forget(reg.agent_id);
    await waitFor(() => h!.registry.registers.length === 2, {
      message: 're-registered while starting',
    });
    expect(h.registry.registers[1]?.ready).toBe(false);
    expect(h.registry.statusOf(reg.agent_id)).toBe('STARTING');

    await expect(agent.markReady()).resolves.toBe(true);
    h.registry.forget(reg.agent_id);
    await waitFor(() => h!.registry.registers.length === 3, {
      message: 're-registered once ready',
    });
    expect(h.registry.registers[2]?.ready).toBeUndefined(); // the registry's default: ready
    expect(h.registry.statusOf(reg.agent_id)).toBe('HEALTHY');
    await waitFor(
      () =>
        h!.registry.heartbeats.length >= 2 && h!.registry.heartbeats.at(-1)?.body.ready === true,
    );
    expect(agent.state).toBe('running');
  });

  it('markReady() resolves false on a closed agent; an agent ready from the start needs no ready field', async () => {
    h = await startHarness({ heartbeatIntervalMs: 40 });
    const starting = h.agent({ ready: false, handler: () => Promise.resolve(null) });
    await starting.start().ready();
    await starting.close();
    await expect(starting.markReady()).resolves.toBe(false);

    const plain = h.agent({ handler: () => Promise.resolve(null) });
    const reg = await plain.start().ready();
    await expect(plain.markReady()).resolves.toBe(true);
    await waitFor(() => h!.registry.heartbeats.some((b) => b.agentId === reg.agent_id), {
      message: 'a heartbeat',
    });
    expect(h.registry.registers.at(-1)?.ready).toBeUndefined();
    expect(
      h.registry.heartbeats
        .filter((b) => b.agentId === reg.agent_id)
        .every((b) => b.body.ready === undefined),
    ).toBe(true);
  });
});
