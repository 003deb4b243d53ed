import { PROBE_CAPABILITY, WORKER_GROUP } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../testing/harness.ts';
import { capturingLogger, Gate, pendingCount } from '../testing/support.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const probe = (taskId: string, payload = '{"sent_at":1}') => ({
  task_id: taskId,
  capability: PROBE_CAPABILITY,
  payload,
});

describe('liveness probes', () => {
  it('are answered like any task — received, completed with their payload, XACKed — without the handler, logged at debug only', async () => {
    h = await startHarness();
    const { logger, lines } = capturingLogger();
    let calls = 0;
    const agent = h.agent({ logger, handler: () => ((calls += 1), Promise.resolve('handled')) });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, probe('probe:1', '{"n":1}'));
    const identity = {
      task_id: 'probe:1',
      agent_id: reg.agent_id,
      instance_id: agent.options.instanceId,
      epoch: String(reg.epoch),
      attempt: '1',
    };
    // Answered in the tick it was read: one ack reports both stages (`received_ago_ms`).
    expect(await h.waitForAcks('probe:1', 2)).toEqual([
      { ...identity, stage: 'received' },
      {
        ...identity,
        stage: 'completed',
        result: '{"n":1}',
        duration_ms: '0',
        capability: PROBE_CAPABILITY,
        received_ago_ms: expect.stringMatching(/^\d+$/),
      },
    ]);
    await waitFor(async () => (await pendingCount(h!.redis, reg.stream, WORKER_GROUP)) === 0, {
      message: 'XACKed',
    });
    expect(calls).toBe(0);
    const about = lines.filter((l) => l['task_id'] === 'probe:1');
    expect(about.length).toBeGreaterThan(0);
    expect(about.every((l) => l.level <= 20)).toBe(true);
  });

  it('are not remembered as completed: they never push a real result out of the cache, and are answered every time', async () => {
    h = await startHarness();
    const calls: string[] = [];
    const agent = h.agent({
      completedCacheSize: 1,
      handler: (t) => (calls.push(t.taskId), Promise.resolve(calls.length)),
    });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'real' });
    await h.waitForAcks('real', 2);
    await h.addTask(reg.agent_id, probe('probe:2'));
    // Answered first: a second delivery of an unfinished attempt is a re-sent command, not a probe.
    await h.waitForAcks('probe:2', 2);
    await h.addTask(reg.agent_id, probe('probe:2', '{"sent_at":2}'));
    const probeAcks = await h.waitForAcks('probe:2', 4);
    expect(probeAcks.filter((a) => a['stage'] === 'completed').map((a) => a['result'])).toEqual([
      '{"sent_at":1}',
      '{"sent_at":2}',
    ]);
    // With room for one result, 'real' is still the one remembered.
    await h.addTask(reg.agent_id, { task_id: 'real', attempt: 2 });
    const real = await h.waitForAcks('real', 4);
    expect(real[3]).toMatchObject({
      stage: 'completed',
      result: '1',
      duration_ms: '0',
      attempt: '2',
    });
    expect(calls).toEqual(['real']);
  });

  it('take a slot: an agent whose slots are all held does not read a probe until one frees', async () => {
    h = await startHarness({ heartbeatIntervalMs: 40 });
    const gate = new Gate();
    const agent = h.agent({ maxConcurrency: 1, handler: () => gate.promise.then(() => 'slow') });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'stuck' });
    await h.waitForAcks('stuck', 1);
    // By hand: the delivery refuses an agent with no free slot, and the prober skips one.
    await h.addEntryByHand(reg.agent_id, probe('probe:3'));
    // Three beats' time: an agent with a free slot would have answered long before.
    const beats = h.registry.heartbeats.length;
    await waitFor(() => h!.registry.heartbeats.length >= beats + 3, {
      message: 'three heartbeats',
    });
    expect(await h.acksOf('probe:3')).toEqual([]);
    expect(h.registry.heartbeats.at(-1)?.body).toMatchObject({ inflight: 1, status: 'busy' });

    gate.open();
    await h.waitForAcks('probe:3', 2);
    const order = [...(await h.acksOf('stuck')), ...(await h.acksOf('probe:3'))].map(
      (a) => `${a['task_id']}:${a['stage']}`,
    );
    expect(order).toEqual([
      'stuck:received',
      'stuck:completed',
      'probe:3:received',
      'probe:3:completed',
    ]);
    // The probe was read only after the stuck task's completion went out.
    const ids = (await h.acks()).map((a) => a.fields['task_id']);
    expect(ids.lastIndexOf('stuck')).toBeLessThan(ids.indexOf('probe:3'));
  });

  it('ask the health check: true passes the probe, false, a throw or no answer in time fails it', async () => {
    h = await startHarness();
    let answer: () => boolean | Promise<boolean> = () => true;
    const signals: AbortSignal[] = [];
    const agent = h.agent({
      handler: () => Promise.resolve('handled'),
      healthTimeoutMs: 200,
      health: (signal) => (signals.push(signal), answer()),
    });
    const reg = await agent.start().ready();
    const outcome = async (taskId: string) => {
      await h!.addTask(reg.agent_id, probe(taskId));
      const acks = await h!.waitForAcks(taskId, 2);
      return acks[1] ?? {};
    };
    expect(await outcome('probe:ok')).toMatchObject({ stage: 'completed' });
    answer = () => false;
    expect(await outcome('probe:no')).toMatchObject({
      stage: 'failed',
      error: 'health check failed: it returned false',
      retryable: 'false',
    });
    answer = () => {
      throw new Error('GPU lost');
    };
    expect(await outcome('probe:throw')).toMatchObject({
      stage: 'failed',
      error: expect.stringContaining('GPU lost'),
    });
    answer = () => new Promise<boolean>(() => {});
    expect(await outcome('probe:slow')).toMatchObject({
      stage: 'failed',
      error: 'health check failed: no answer within 200 ms',
    });
    expect(signals.at(-1)?.aborted).toBe(true);
  });
});
