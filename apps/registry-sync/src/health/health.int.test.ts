/**
 * Health from outcomes against a real Redis: outcomes recorded in an agent's window turn it
 * DEGRADED (never more than the outlier cap allows), heartbeats keep it so, `ready: false` and
 * back works on a DEGRADED agent, failed probes in a row make it SUSPECT until one passes, and
 * passed probes after the cooldown bring it back to HEALTHY with a fresh window.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys, type AgentView, type RegisterReply } from '@agent-reach/protocol';
import { FleetEventLog } from '@agent-reach/dispatch';
import { loadScripts } from '@agent-reach/service-kit';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';
import { HealthRecorder } from './health-recorder.ts';
import { outcomesScript } from './commands/outcomes.ts';
import { dependencyDownScript } from './commands/dependency-down.ts';

let service: RegistryService;
let redis: Redis;
let prefix: string;
let recorder: HealthRecorder;

beforeEach(async () => {
  prefix = randomPrefix();
  service = await createRegistryService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      heartbeatIntervalMs: 100,
      suspectMs: 5000,
      offlineMs: 10_000,
      sweepIntervalMs: 50,
      snapshotIntervalMs: 200,
      // No probes of its own: the test records the probe outcomes.
      probeIntervalMs: 3_600_000,
      degradeCooldownMs: 500,
    },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
  loadScripts(redis, [outcomesScript, dependencyDownScript]);
  const logger = pino({ level: 'silent' });
  recorder = new HealthRecorder({
    redis,
    keys: reachKeys(prefix),
    fleet: new FleetEventLog({ redis, keys: reachKeys(prefix), logger }),
    settings: { healthWindow: 100, probeFailures: 3 },
    logger,
  });
});

afterEach(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

async function register(agentId: string): Promise<RegisterReply> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { agent_id: agentId, capabilities: ['echo'], max_concurrency: 4 },
  });
  expect(res.statusCode).toBe(200);
  return res.json<RegisterReply>();
}

async function heartbeat(reg: RegisterReply, body: Record<string, unknown> = {}): Promise<string> {
  const res = await service.app.inject({
    method: 'POST',
    url: `/v1/agents/${reg.agent_id}/heartbeat`,
    headers: { authorization: `Bearer ${reg.token}` },
    payload: { inflight: 0, ...body },
  });
  expect(res.statusCode).toBe(200);
  return res.json<{ status: string }>().status;
}

const view = async (agentId: string): Promise<AgentView> =>
  (await service.app.inject({ url: `/v1/agents/${agentId}` })).json<AgentView>();

async function record(agentId: string, outcome: Parameters<HealthRecorder['record']>[1], n = 1) {
  for (let i = 0; i < n; i++) recorder.record(agentId, outcome);
  await recorder.flush();
}

const statusIs = (agentId: string, status: string) =>
  waitFor(async () => (await view(agentId)).status === status, {
    timeoutMs: 5000,
    message: `${agentId} never ${status}`,
  });

describe('health from outcomes', () => {
  it('turns a failing agent DEGRADED within the cap, keeps it so through heartbeats and recovers it by probes', async () => {
    const a1 = await register('a1');
    const a2 = await register('a2');
    // 19 tasks are not enough, whatever they did.
    await record('a1', 'failed', 19);
    await record('a2', 'failed', 19);
    expect((await view('a1')).health_score).toBe(0);
    // Both over the rate with 20 tasks: only one of the two may be out at once.
    await record('a1', 'failed');
    await record('a2', 'failed');
    await waitFor(
      async () => [(await view('a1')).status, (await view('a2')).status].includes('DEGRADED'),
      { timeoutMs: 5000, message: 'neither agent turned DEGRADED' },
    );
    const [degraded, other] = (await view('a1')).status === 'DEGRADED' ? [a1, a2] : [a2, a1];
    expect((await view(other.agent_id)).status).toBe('HEALTHY');
    const v = await view(degraded.agent_id);
    expect(v.degraded_until).toBeGreaterThan(0);

    // Heartbeats keep it DEGRADED; ready: false stops its tasks, ready: true brings it back as it was.
    expect(await heartbeat(degraded)).toBe('DEGRADED');
    expect(await heartbeat(degraded, { ready: false })).toBe('STARTING');
    expect(await heartbeat(degraded)).toBe('STARTING');
    expect(await heartbeat(degraded, { ready: true })).toBe('DEGRADED');

    // Three failed probes in a row: SUSPECT, kept by heartbeats; a passed probe ends it.
    await record(degraded.agent_id, 'probeFailed', 2);
    expect((await view(degraded.agent_id)).status).toBe('DEGRADED');
    await record(degraded.agent_id, 'probeFailed');
    expect((await view(degraded.agent_id)).status).toBe('SUSPECT');
    expect(await heartbeat(degraded)).toBe('SUSPECT');
    await record(degraded.agent_id, 'probeOk');
    expect((await view(degraded.agent_id)).status).toBe('DEGRADED');

    // After the cooldown, three passed probes in a row bring it back with a fresh window.
    await record(degraded.agent_id, 'probeOk', 2);
    await statusIs(degraded.agent_id, 'HEALTHY');
    expect((await view(degraded.agent_id)).health_score).toBe(100);
    expect((await view(degraded.agent_id)).degraded_until).toBe(0);
    // Now the other one may go.
    await record(other.agent_id, 'failed');
    await statusIs(other.agent_id, 'DEGRADED');
  });

  it('counts slow completions at half and leaves an agent under the rate HEALTHY', async () => {
    await register('a1');
    await register('a2');
    await record('a1', 'completed', 18);
    await record('a1', 'slow', 1);
    await record('a1', 'failed', 1);
    await record('a1', 'completed', 10);
    const v = await view('a1');
    // 30 outcomes, 1.5 bad: 95; error rate 1/30 is under 0.10.
    expect(v.health_score).toBe(95);
    expect(v.status).toBe('HEALTHY');
  });

  it('keeps a dependency-down agent SUSPECT through heartbeats until a probe passes without it', async () => {
    const reg = await register('dep-1');
    await heartbeat(reg);
    const keys = reachKeys(prefix);
    const check = (ok: boolean) => ({
      ok,
      at: Date.now(),
      dependencies: { 'model-gateway': { ok, latency_ms: ok ? 3 : 3000 } },
    });
    const marked = await dependencyDownScript.run(redis, {
      keys: { agent: keys.agent('dep-1') },
      args: { dependency: 'model-gateway' },
    });
    expect(marked).toEqual({ marked: true, previous: 'HEALTHY' });
    // Marked once only.
    expect(
      (
        await dependencyDownScript.run(redis, {
          keys: { agent: keys.agent('dep-1') },
          args: { dependency: 'model-gateway' },
        })
      ).marked,
    ).toBe(false);
    expect(await heartbeat(reg)).toBe('SUSPECT');
    expect(await view('dep-1')).toMatchObject({
      status: 'SUSPECT',
      dependency_down: 'model-gateway',
    });
    // A probe that passes while its answer still reports the dependency down does not clear it.
    recorder.record('dep-1', 'probeOk', { ...check(false), ok: true });
    await recorder.flush();
    expect(await view('dep-1')).toMatchObject({
      status: 'SUSPECT',
      dependency_down: 'model-gateway',
    });
    // One that reports it up does; the answer is kept with the agent.
    recorder.record('dep-1', 'probeOk', check(true));
    await recorder.flush();
    const back = await view('dep-1');
    expect(back.status).toBe('HEALTHY');
    expect(back.dependency_down).toBeUndefined();
    expect(back.health_check?.dependencies['model-gateway']).toEqual({ ok: true, latency_ms: 3 });
    expect(await heartbeat(reg)).toBe('HEALTHY');
    // Probe outcomes are counted fleet-wide for the alerts.
    expect(Number(await redis.hget(keys.stats(), 'probes_passed'))).toBe(2);
  });
});
