import { WORKER_GROUP, decodeAck } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NonRetryableError } from '../errors.ts';
import { startHarness, type Harness } from '../testing/harness.ts';
import { Gate, pendingCount } from '../testing/support.ts';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.cleanup();
});

describe('ReachAgent on real Redis', () => {
  it('reports received, then completed with the result, and XACKs', async () => {
    const agent = h.agent({
      maxConcurrency: 2,
      handler: async (task) => {
        await new Promise((resolve) => setTimeout(resolve, 60)); // the work itself
        return { echoed: task.payload, attempt: task.attempt, traceId: task.traceId };
      },
    });
    expect(agent.start()).toBe(agent);
    expect(agent.state).toBe('starting'); // start() does not wait for the registry
    const reg = await agent.ready();
    expect(agent.state).toBe('running');

    await h.addTask(reg.agent_id, {
      task_id: 't-1',
      payload: JSON.stringify({ hello: 'world' }),
      attempt: 2,
    });
    const [received, completed] = await h.waitForAcks('t-1', 2);
    const identity = {
      task_id: 't-1',
      agent_id: reg.agent_id,
      instance_id: agent.options.instanceId,
      epoch: String(reg.epoch),
      attempt: '2',
    };
    expect(received).toEqual({ ...identity, stage: 'received' });
    // A completion names its capability (the server records the agent's speed with it). The
    // handler outlived the tick in which receipts go out, so the receipt was its own entry.
    expect(completed).toEqual({
      ...identity,
      stage: 'completed',
      result: JSON.stringify({ echoed: { hello: 'world' }, attempt: 2, traceId: 'trace-t-1' }),
      duration_ms: expect.stringMatching(/^\d+$/),
      capability: 'echo',
    });
    expect(Number(completed?.['duration_ms'])).toBeGreaterThanOrEqual(55);
    // What the server will decode:
    const decoded = decodeAck(Object.entries(completed ?? {}).flat());
    expect(decoded).toMatchObject({
      ok: true,
      value: { stage: 'completed', attempt: 2, epoch: reg.epoch },
    });
    await waitFor(async () => (await pendingCount(h.redis, reg.stream, WORKER_GROUP)) === 0, {
      message: 'XACKed',
    });
  });

  it('never holds more than maxConcurrency tasks, and reads more as slots free up', async () => {
    const gates = new Map<string, Gate>();
    let running = 0;
    let maxRunning = 0;
    const agent = h.agent({
      maxConcurrency: 2,
      handler: async (task) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await gates.get(task.taskId)?.promise;
        running -= 1;
        return task.taskId;
      },
    });
    const reg = await agent.start().ready();
    const ids = ['c1', 'c2', 'c3', 'c4', 'c5'];
    for (const id of ids) gates.set(id, new Gate());
    // Five entries for two slots: more than the router's delivery lets through at once (an inbox
    // can still hold them, from before a restart with fewer slots, say), so they go in by hand.
    for (const id of ids) await h.addEntryByHand(reg.agent_id, { task_id: id });

    // Sample the group's pending list throughout: it is exactly what the agent has read.
    let maxPending = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxPending = Math.max(maxPending, await pendingCount(h.redis, reg.stream, WORKER_GROUP));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const receivedCount = async () =>
      (await h.acks()).filter((a) => a.fields['stage'] === 'received').length;

    await waitFor(async () => (await receivedCount()) === 2, { message: 'two received' });
    for (let i = 0; i < ids.length; i++) {
      // Open the oldest running task's gate; one more may be read.
      const acks = await h.acks();
      const receivedIds = acks
        .filter((a) => a.fields['stage'] === 'received')
        .map((a) => a.fields['task_id']);
      const next = receivedIds.find(
        (id) => !acks.some((a) => a.fields['task_id'] === id && a.fields['stage'] === 'completed'),
      );
      gates.get(next ?? '')?.open();
      await waitFor(async () =>
        (await h.acks()).some(
          (a) => a.fields['task_id'] === next && a.fields['stage'] === 'completed',
        ),
      );
      expect(agent.inflight).toBeLessThanOrEqual(2);
    }
    await waitFor(
      async () => (await h.acks()).filter((a) => a.fields['stage'] === 'completed').length === 5,
    );
    sampling = false;
    await sampler;
    expect(maxPending).toBeLessThanOrEqual(2);
    expect(maxPending).toBe(2);
    expect(maxRunning).toBe(2);
  });

  it('does not run a task_id it already completed; reports the remembered result', async () => {
    let calls = 0;
    const agent = h.agent({
      handler: (task) => {
        calls += 1;
        return Promise.resolve({ n: calls, payload: task.payload });
      },
    });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'dup', payload: '"x"' });
    await h.waitForAcks('dup', 2);
    await h.addTask(reg.agent_id, { task_id: 'dup', payload: '"x"', attempt: 2 });
    const acks = await h.waitForAcks('dup', 4);
    expect(acks.map((a) => a['stage'])).toEqual(['received', 'completed', 'received', 'completed']);
    expect(calls).toBe(1);
    expect(acks[3]?.['result']).toBe(acks[1]?.['result']);
    expect(acks[3]).toMatchObject({ attempt: '2', duration_ms: '0' });
    await waitFor(async () => (await pendingCount(h.redis, reg.stream, WORKER_GROUP)) === 0);
  });

  it('shares one execution when a task_id is delivered again while running', async () => {
    const gate = new Gate();
    let calls = 0;
    const agent = h.agent({
      maxConcurrency: 4,
      handler: async () => {
        calls += 1;
        await gate.promise;
        return 'once';
      },
    });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'twin' });
    await h.addTask(reg.agent_id, { task_id: 'twin', attempt: 2 });
    await waitFor(async () => (await h.acksOf('twin')).length === 2, { message: 'both received' });
    gate.open();
    const acks = await h.waitForAcks('twin', 4);
    expect(acks.filter((a) => a['stage'] === 'completed').map((a) => a['result'])).toEqual([
      '"once"',
      '"once"',
    ]);
    expect(calls).toBe(1);
  });

  it('close() stops reading, finishes in-flight work, deregisters; same promise every call', async () => {
    const gate = new Gate();
    const agent = h.agent({ maxConcurrency: 2, handler: () => gate.promise.then(() => 'done') });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'inflight' });
    await h.waitForAcks('inflight', 1);

    const closing = agent.close();
    expect(agent.close()).toBe(closing);
    expect(agent.state).toBe('draining');
    // Races the unblock: it is either read before the loop stops (then fully handled) or never.
    await h.addTask(reg.agent_id, { task_id: 'late' });
    gate.open();
    await closing;

    expect(agent.state).toBe('closed');
    expect((await h.acksOf('inflight')).map((a) => a['stage'])).toEqual(['received', 'completed']);
    expect([[], ['received', 'completed']]).toContainEqual(
      (await h.acksOf('late')).map((a) => a['stage']),
    );
    expect(await pendingCount(h.redis, reg.stream, WORKER_GROUP)).toBe(0);
    expect(h.registry.deregisters).toEqual([reg.agent_id]);
    expect(() => agent.start()).toThrow(/closed/);
    await expect(agent.ready()).resolves.toMatchObject({ agent_id: reg.agent_id });
    const clients = (await h.redis.client('LIST')) as string;
    expect(clients).not.toContain(`name=reach:${reg.agent_id}:`);
  });

  it('close() interrupts a long BLOCK at once', async () => {
    const agent = h.agent({ blockMs: 20_000, handler: () => Promise.resolve(null) });
    await agent.start().ready();
    const name = `reach:${agent.options.agentId}:read`;
    await waitFor(
      async () => {
        const list = (await h.redis.client('LIST')) as string;
        return list
          .split('\n')
          .some((line) => line.includes(`name=${name} `) && line.includes('cmd=xreadgroup'));
      },
      { message: 'agent blocked in XREADGROUP' },
    );
    const started = Date.now();
    await agent.close();
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('at the shutdown timeout aborts the handlers’ signals and reports them retryable', async () => {
    const agent = h.agent({
      shutdownTimeoutMs: 100,
      handler: (task) =>
        new Promise((_resolve, reject) => {
          task.signal.addEventListener('abort', () => reject(task.signal.reason as Error));
        }),
    });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'stuck' });
    await h.waitForAcks('stuck', 1);
    await agent.close();
    const acks = await h.acksOf('stuck');
    expect(acks[1]).toMatchObject({
      stage: 'failed',
      retryable: 'true',
      error: 'aborted by agent shutdown',
    });
  });

  it('reports handler errors: retryable by default, not for NonRetryableError or retryable === false', async () => {
    const agent = h.agent({
      maxConcurrency: 4,
      handler: (task) => {
        if (task.taskId === 'plain') return Promise.reject(new Error('boom'));
        if (task.taskId === 'final') return Promise.reject(new NonRetryableError('bad input'));
        if (task.taskId === 'flagged')
          return Promise.reject(Object.assign(new Error('nope'), { retryable: false }));
        return Promise.resolve(10n); // not JSON-serialisable
      },
    });
    const reg = await agent.start().ready();
    for (const id of ['plain', 'final', 'flagged', 'bigint'])
      await h.addTask(reg.agent_id, { task_id: id });
    expect((await h.waitForAcks('plain', 2))[1]).toMatchObject({
      stage: 'failed',
      error: 'boom',
      retryable: 'true',
    });
    expect((await h.waitForAcks('final', 2))[1]).toMatchObject({
      stage: 'failed',
      error: 'bad input',
      retryable: 'false',
    });
    expect((await h.waitForAcks('flagged', 2))[1]).toMatchObject({
      stage: 'failed',
      error: 'nope',
      retryable: 'false',
    });
    expect((await h.waitForAcks('bigint', 2))[1]).toMatchObject({
      stage: 'failed',
      retryable: 'false',
    });
    await waitFor(async () => (await pendingCount(h.redis, reg.stream, WORKER_GROUP)) === 0);
  });

  it('deadlines: passed before start → failed, not run; passing while running → signal aborted, not retryable', async () => {
    const ran: string[] = [];
    const agent = h.agent({
      maxConcurrency: 2,
      handler: (task) => {
        ran.push(task.taskId);
        return new Promise((_resolve, reject) =>
          task.signal.addEventListener('abort', () => reject(new Error('gave up'))),
        );
      },
    });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'expired', deadline_ms: Date.now() - 1000 });
    expect(await h.waitForAcks('expired', 2)).toMatchObject([
      { stage: 'received' },
      { stage: 'failed', error: 'deadline passed', retryable: 'false' },
    ]);
    await h.addTask(reg.agent_id, { task_id: 'runs-out', deadline_ms: Date.now() + 150 });
    expect((await h.waitForAcks('runs-out', 2))[1]).toMatchObject({
      stage: 'failed',
      error: 'gave up',
      retryable: 'false',
    });
    expect(ran).toEqual(['runs-out']);
  });

  it('XACKs undecodable and trimmed entries, logs them, and keeps going', async () => {
    const agent = h.agent({ handler: (task) => Promise.resolve(task.payload) });
    const reg = await agent.start().ready();
    await h.redis.xadd(reg.stream, '*', 'foo', 'bar');
    await h.redis.xadd(reg.stream, '*', 'task_id', 'x{y}', 'capability', 'echo', 'attempt', '1');
    await h.addTask(reg.agent_id, { task_id: 'good', payload: '{"ok":true}' });
    expect((await h.waitForAcks('good', 2))[1]).toMatchObject({
      stage: 'completed',
      result: '{"ok":true}',
    });
    await waitFor(async () => (await pendingCount(h.redis, reg.stream, WORKER_GROUP)) === 0, {
      message: 'junk XACKed',
    });
    // Nothing for the junk: the good task's one ack (its receipt folded into its completion).
    expect((await h.acks()).map((a) => a.fields['task_id'])).toEqual(['good']);
    expect(agent.state).toBe('running');
  });

  it('answers a payload that is not JSON with a non-retryable failure', async () => {
    const agent = h.agent({ handler: () => Promise.resolve('unreachable') });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'badjson', payload: '{nope' });
    expect((await h.waitForAcks('badjson', 2))[1]).toMatchObject({
      stage: 'failed',
      retryable: 'false',
    });
  });
});
