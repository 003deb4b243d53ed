/**
 * The router's choice, on real Redis: no herding across routers, every exclusion explained by
 * GET /v1/route, tags, regions, observation mode, sessions, and the routing record in `sent`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys } from '@agent-reach/protocol';
import { createRegistryService, type RegistryService } from '@agent-reach/registry-sync';
import { createRouterService, type RouterService } from '@agent-reach/router';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { monitorCommands } from '../support/monitor.ts';

const silent = pino({ level: 'silent' });
let prefix: string;
let redis: Redis;
let sync: RegistryService;
const routers: RouterService[] = [];

beforeAll(async () => {
  prefix = randomPrefix();
  const url = testServices().redisUrl;
  redis = new Redis(url);
  sync = await createRegistryService(
    { redisUrl: url, prefix, probeIntervalMs: 600_000 },
    { logger: silent },
  );
  // A generous store timeout: a 1,000-request burst on a loaded 2-core machine is not an outage.
  for (let i = 0; i < 3; i++)
    routers.push(
      await createRouterService(
        { redisUrl: url, prefix, storeTimeoutMs: 10_000 },
        { logger: silent },
      ),
    );
});

afterAll(async () => {
  await Promise.all(routers.map((r) => r.close()));
  await sync?.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const router = (i = 0) => routers[i] as RouterService;
async function register(body: Record<string, unknown>) {
  const res = await sync.app.inject({ method: 'POST', url: '/v1/agents/register', payload: body });
  expect(res.statusCode).toBe(200);
  await Promise.all(routers.map((r) => r.snapshot.reload()));
  return res.json<{ token: string; stream: string; pools: string[]; epoch: number }>();
}
const submit = (payload: Record<string, unknown>, i = 0) =>
  router(i).app.inject({ method: 'POST', url: '/v1/tasks', payload });

describe('three routers, one burst', () => {
  it('spreads 1,000 tasks over 10 equal agents within 1.25× and never past max_concurrency', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `herd-${i}`);
    for (const id of ids)
      await register({ agent_id: id, capabilities: ['herd'], max_concurrency: 150 });
    const replies = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => submit({ capability: 'herd', payload: i }, i % 3)),
    );
    expect(replies.filter((r) => r.statusCode !== 202).map((r) => r.body)).toEqual([]);
    const keys = reachKeys(prefix);
    // Tasks in flight per agent (registry-sync's liveness probes are not caller traffic).
    const counts = await Promise.all(
      ids.map(
        async (id) =>
          (await redis.hkeys(keys.pending(id))).filter((t) => !t.startsWith('probe:')).length,
      ),
    );
    const ratio = Math.max(...counts) / Math.min(...counts);
    console.log(
      `herd: 3 routers, 10 agents, 1000 tasks → per agent ${counts.join(' ')} (max/min ${ratio.toFixed(3)})`,
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(ratio).toBeLessThanOrEqual(1.25);
    expect(Math.max(...counts)).toBeLessThanOrEqual(150);
  });

  it('never pushes an agent past max_concurrency: the overflow waits in the room, or gets 429 when it asks', async () => {
    await register({ agent_id: 'tiny', capabilities: ['tiny'], max_concurrency: 5 });
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        submit({ capability: 'tiny', payload: i, on_at_capacity: 'reject' }, i % 3),
      ),
    );
    const codes = replies.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 202)).toHaveLength(5);
    expect(codes.filter((c) => c === 429)).toHaveLength(25);
    const refused = replies.find((r) => r.statusCode === 429);
    // The 429 names the task_id the router made: a retry with it can never run the task twice.
    expect(refused?.json()).toMatchObject({
      error: 'AT_CAPACITY',
      task_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(refused?.headers['retry-after']).toBeDefined();
    const inflight = async () =>
      (await redis.hkeys(reachKeys(prefix).pending('tiny'))).filter((t) => !t.startsWith('probe:'));
    expect(await inflight()).toHaveLength(5);
    // By default the overflow is accepted as queued, and sent only as slots free.
    const queued = await Promise.all(
      Array.from({ length: 10 }, (_, i) => submit({ capability: 'tiny', payload: i }, i % 3)),
    );
    expect(queued.map((r) => [r.statusCode, r.json<{ status: string }>().status])).toEqual(
      Array.from({ length: 10 }, () => [202, 'queued']),
    );
    const first = (await inflight())[0] ?? '';
    await redis.hdel(reachKeys(prefix).pending('tiny'), first);
    const ids = queued.map((r) => r.json<{ task_id: string }>().task_id);
    await waitFor(
      async () => {
        const sent = [];
        for (const id of ids) {
          const v = (await router().app.inject({ url: `/v1/tasks/${id}` })).json<{
            status: string;
          }>();
          if (v.status !== 'queued') sent.push(id);
        }
        return sent.length === 1;
      },
      { message: 'one queued task did not take the freed slot' },
    );
    expect(await inflight()).toHaveLength(5);
  });

  it('reads the true count before refusing: a slot freed since its last delivery takes the next task', async () => {
    await register({ agent_id: 'small', capabilities: ['small'], max_concurrency: 2 });
    const first = await Promise.all([
      submit({ capability: 'small', payload: 1 }),
      submit({ capability: 'small', payload: 2 }),
    ]);
    expect(first.map((r) => r.statusCode)).toEqual([202, 202]);
    // The router's own count now says 2 of 2. One task finishes: its slot (pending entry) is freed,
    // which the router does not see until a snapshot.
    await redis.hdel(
      reachKeys(prefix).pending('small'),
      first[0]?.json<{ task_id: string }>().task_id ?? '',
    );
    const next = await submit({ capability: 'small', payload: 3 });
    expect(next.statusCode).toBe(202);
    // Full for real: Redis' count refuses.
    const over = await submit({ capability: 'small', payload: 4, on_at_capacity: 'reject' });
    expect(over.statusCode).toBe(429);
  });
});

describe('admission wait', () => {
  it('holds a submission that finds every agent busy until a slot frees, and refuses it once the wait is over', async () => {
    await register({ agent_id: 'narrow', capabilities: ['narrow'], max_concurrency: 1 });
    const first = await submit({ capability: 'narrow', payload: 1 });
    expect(first.statusCode).toBe(202);
    // The slot frees 80 ms into the second submission's wait (its task finished).
    const started = Date.now();
    setTimeout(
      () =>
        void redis.hdel(
          reachKeys(prefix).pending('narrow'),
          first.json<{ task_id: string }>().task_id,
        ),
      80,
    );
    const second = await submit({ capability: 'narrow', payload: 2, on_at_capacity: 'reject' });
    expect(second.statusCode).toBe(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    // Nothing frees now: 429 after the router's wait (REACH_ADMISSION_WAIT_MS, 200 ms by default).
    const refusedAt = Date.now();
    const third = await submit({
      task_id: 'narrow-3',
      capability: 'narrow',
      payload: 3,
      on_at_capacity: 'reject',
    });
    expect(third.statusCode).toBe(429);
    expect(third.json()).toMatchObject({ error: 'AT_CAPACITY', task_id: 'narrow-3' });
    expect(Date.now() - refusedAt).toBeGreaterThanOrEqual(190);
  });
});

describe('deliveries in flight', () => {
  it('hold a submission that finds every agent full only through them, instead of the waiting room', async () => {
    const keys = reachKeys(prefix);
    await register({ agent_id: 'landing', capabilities: ['landing'], max_concurrency: 2 });
    // A router whose admission wait outlasts a slow machine's turns.
    const patient = await createRouterService(
      { redisUrl: testServices().redisUrl, prefix, admissionWaitMs: 2000 },
      { logger: silent },
    );
    const at = routers.push(patient) - 1;
    const state = (r: { json<T>(): T }) => r.json<{ status: string; agent_id: string }>();
    // Warm: its first submission compiles schemas and loads scripts; its slot is freed again.
    const warm = await submit({ capability: 'landing', payload: 0 }, at);
    expect(state(warm).status).toBe('sent');
    await redis.hdel(keys.pending('landing'), warm.json<{ task_id: string }>().task_id);

    // Two deliveries chosen and not yet answered (a stall between the router and Redis): the
    // router counts the agent full, Redis counts it empty. They land 150 ms into the submission.
    patient.snapshot.reserve('landing');
    patient.snapshot.reserve('landing');
    const started = Date.now();
    setTimeout(() => {
      patient.snapshot.settle('landing');
      patient.snapshot.settle('landing');
    }, 150);
    const held = await submit({ capability: 'landing', payload: 1 }, at);
    expect(held.statusCode).toBe(202);
    expect(state(held)).toMatchObject({ status: 'sent', agent_id: 'landing' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(145);

    // Deliveries that never land: the room once the admission wait (200 ms here) is over.
    router().snapshot.reserve('landing');
    router().snapshot.reserve('landing');
    const waitedAt = Date.now();
    const late = await submit({ capability: 'landing', payload: 2 });
    router().snapshot.settle('landing');
    router().snapshot.settle('landing');
    expect(late.statusCode).toBe(202);
    expect(state(late).status).toBe('queued');
    expect(Date.now() - waitedAt).toBeGreaterThanOrEqual(190);
  });

  it('do not hold a submission when Redis counts every agent full too', async () => {
    await register({ agent_id: 'packed', capabilities: ['packed'], max_concurrency: 1 });
    const first = await submit({ capability: 'packed', payload: 1 });
    expect(first.json<{ status: string }>().status).toBe('sent');
    const second = await submit({ capability: 'packed', payload: 2 });
    expect(second.statusCode).toBe(202);
    expect(second.json<{ status: string }>().status).toBe('queued');
  });
});

describe('retries first', () => {
  it('leaves a freed slot to a retry registry-sync holds, before a submission the router holds', async () => {
    const keys = reachKeys(prefix);
    const reg = await register({
      agent_id: 'first',
      instance_id: 'first-1',
      capabilities: ['first'],
      max_concurrency: 2,
    });
    const status = async (id: string) =>
      (await router().app.inject({ url: `/v1/tasks/${id}` })).json<{
        status: string;
        attempts: number;
      }>();
    const idOf = (r: { json<T>(): T }) => r.json<{ task_id: string }>().task_id;
    const a = await submit({ capability: 'first', payload: 'a' });
    const b = await submit({ capability: 'first', payload: 'b' });
    expect([a.statusCode, b.statusCode]).toEqual([202, 202]);
    // b fails (retryable); while it backs off, c takes its slot: both slots are busy again.
    await redis.xadd(
      keys.acks(),
      '*',
      'task_id',
      idOf(b),
      'stage',
      'failed',
      'agent_id',
      'first',
      'instance_id',
      'first-1',
      'epoch',
      String(reg.epoch),
      'attempt',
      '1',
      'error',
      'boom',
      'retryable',
      'true',
    );
    await waitFor(async () => (await status(idOf(b))).status === 'retry_wait', {
      message: 'b was not scheduled again',
    });
    const c = await submit({ capability: 'first', payload: 'c' });
    expect(c.statusCode).toBe(202);
    // b's retry comes due, finds both slots busy and is held by registry-sync, which says so.
    await waitFor(async () => (await redis.get(keys.retriesWaiting('first'))) === '1', {
      timeoutMs: 8000,
      message: 'the retry was not held',
    });
    // A submission held by a router with a long admission wait.
    const patient = await createRouterService(
      { redisUrl: testServices().redisUrl, prefix, admissionWaitMs: 10_000 },
      { logger: silent },
    );
    routers.push(patient);
    // Its first submission (schemas compiled, scripts loaded) is refused at once: no agent serves it.
    expect(
      (
        await patient.app.inject({
          method: 'POST',
          url: '/v1/tasks',
          payload: { capability: 'nobody-serves', payload: 0 },
        })
      ).statusCode,
    ).toBe(503);
    // While it holds a submission, the router looks at the agent's slots again every few
    // milliseconds: each look counts its slots (slots-2.lua on its pending hash and inbox) or
    // reads the retries' reservation (GET). MONITOR shows those from its connection, the proof
    // that it had its chance at a slot, where a fixed sleep would only hope it had.
    const patientAddr = /\baddr=(\S+)/.exec(
      String(await patient.redis.call('CLIENT', 'INFO')),
    )?.[1];
    expect(patientAddr).toBeDefined();
    const isLook = (args: string[]) => {
      const command = args[0]?.toLowerCase();
      return (
        (command === 'evalsha' && args[3] === keys.pending('first')) ||
        (command === 'get' && args[1] === keys.retriesWaiting('first'))
      );
    };
    let recounts = 0;
    const monitor = await monitorCommands(testServices().redisUrl, ({ source, args }) => {
      if (source === patientAddr && isLook(args)) recounts++;
    });
    try {
      let answered = false;
      const d = patient.app
        .inject({
          method: 'POST',
          url: '/v1/tasks',
          payload: { capability: 'first', payload: 'd', on_at_capacity: 'reject' },
        })
        .then((r) => {
          answered = true;
          return r;
        });
      const recounted = (n: number, message: string) => {
        const from = recounts;
        return waitFor(() => recounts >= from + n, { message });
      };
      await recounted(3, 'the router did not hold the submission');
      expect(answered).toBe(false);
      // a finishes: its slot goes to the retry, and the submission keeps waiting, though the
      // router has counted the slots again since.
      await redis.hdel(keys.pending('first'), idOf(a));
      await waitFor(async () => (await status(idOf(b))).status === 'sent', {
        timeoutMs: 3000,
        message: 'the retry did not get the freed slot',
      });
      expect((await status(idOf(b))).attempts).toBe(2);
      await recounted(3, 'the router did not count the slots again');
      expect(answered).toBe(false);
      // c finishes: now the submission gets a slot, and was sent only once it had.
      const freedAt = Date.now();
      await redis.hdel(keys.pending('first'), idOf(c));
      const admitted = await d;
      expect(admitted.statusCode).toBe(202);
      const sent = (await router().app.inject({ url: `/v1/tasks/${idOf(admitted)}` }))
        .json<{ timeline: { stage: string; at: number }[] }>()
        .timeline.find((e) => e.stage === 'sent');
      expect(sent?.at).toBeGreaterThanOrEqual(freedAt);
    } finally {
      monitor.close();
    }
  });
});

describe('GET /v1/route', () => {
  it('answers the decision without delivering, with every exclusion explained', async () => {
    await register({
      agent_id: 'r-eu',
      capabilities: ['explain'],
      max_concurrency: 10,
      region: 'eu',
      tags: ['gpu'],
    });
    await register({
      agent_id: 'r-us',
      capabilities: ['explain'],
      max_concurrency: 10,
      region: 'us',
      tags: ['gpu'],
    });
    await register({
      agent_id: 'r-cpu',
      capabilities: ['explain'],
      max_concurrency: 10,
      region: 'eu',
    });
    await register({
      agent_id: 'r-watch',
      capabilities: ['explain'],
      max_concurrency: 10,
      region: 'eu',
      tags: ['gpu'],
      observe: true,
    });
    await register({
      agent_id: 'r-later',
      capabilities: ['explain'],
      max_concurrency: 10,
      region: 'eu',
      tags: ['gpu'],
      ready: false,
    });
    const res = await router().app.inject({
      url: '/v1/route?capability=explain&tags=gpu&region=eu&task_id=t-1',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      agent_id: string;
      channel: string;
      score: number;
      snapshot_age_ms: number;
      candidates: { agent_id: string; excluded?: string; load: number }[];
    }>();
    expect(body.agent_id).toBe('r-eu');
    expect(body.channel).toBe('push');
    expect(body.snapshot_age_ms).toBeGreaterThanOrEqual(0);
    const why = Object.fromEntries(
      body.candidates.map((c) => [c.agent_id, c.excluded ?? 'candidate']),
    );
    expect(why).toEqual({
      'r-eu': 'candidate',
      'r-us': 'region',
      'r-cpu': 'missing_tags',
      'r-watch': 'observing',
      'r-later': 'starting',
    });
    const keys = reachKeys(prefix);
    expect(await redis.xlen(keys.inbox('r-eu'))).toBe(0);
    // Region preferred, not required: with only US agents live for the tag, the US one serves.
    const prefer = await router().app.inject({
      url: '/v1/route?capability=explain&tags=gpu&region=ap',
    });
    expect(prefer.json<{ agent_id: string }>().agent_id).toMatch(/^r-(eu|us)$/);
    const strict = await router().app.inject({
      url: '/v1/route?capability=explain&tags=gpu&region=ap&region_policy=strict',
    });
    expect(strict.json()).toMatchObject({ agent_id: '', channel: 'none' });
    expect((await router().app.inject({ url: '/v1/route?capability=bad{cap}' })).statusCode).toBe(
      400,
    );
  });

  it('sends an observing agent probes only until it switches itself to serve', async () => {
    const watcher = await register({
      agent_id: 'watcher',
      capabilities: ['watched'],
      max_concurrency: 10,
      observe: true,
    });
    expect(
      (await submit({ capability: 'watched', payload: 1, on_no_agent: 'reject' })).statusCode,
    ).toBe(503);
    const serve = (agentId: string, token?: string) =>
      sync.app.inject({
        method: 'POST',
        url: `/v1/agents/${agentId}/serve`,
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
      });
    // The agent itself, with its token (keys are open here: any other caller is the operator).
    expect((await serve('watcher', `${watcher.epoch}.${'x'.repeat(32)}`)).statusCode).toBe(401);
    const served = await serve('watcher', watcher.token);
    expect(served.statusCode).toBe(200);
    expect(served.json()).toMatchObject({ agent_id: 'watcher', observe: false });
    await router().snapshot.reload();
    const res = await submit({ capability: 'watched', payload: 1 });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ agent_id: 'watcher' });
    expect((await serve('nobody', watcher.token)).statusCode).toBe(404);
  });
});

describe('load, watermark, priority and slowness', () => {
  type RouteBody = {
    agent_id: string;
    candidates: { agent_id: string; score: number; load: number; excluded?: string }[];
  };
  const explain = async (q: string) =>
    (await router().app.inject({ url: `/v1/route?${q}` })).json<RouteBody>();

  it('skips an agent at the 85 % watermark while another has room', async () => {
    await register({ agent_id: 'w-busy', capabilities: ['wm'], max_concurrency: 10 });
    for (let i = 0; i < 9; i++)
      expect((await submit({ capability: 'wm', payload: i })).statusCode).toBe(202);
    await register({ agent_id: 'w-idle', capabilities: ['wm'], max_concurrency: 10 });
    await sync.housekeeper.writeSnapshotNow();
    await router().snapshot.reload();
    const body = await explain('capability=wm');
    expect(body.agent_id).toBe('w-idle');
    expect(body.candidates.find((c) => c.agent_id === 'w-busy')).toMatchObject({
      excluded: 'watermark',
      load: 0.9,
    });
  });

  it('lets priority decide between agents of equal load, and penalises one slower than 1.5× its peers', async () => {
    await register({ agent_id: 'p-plain', capabilities: ['prio'], max_concurrency: 10 });
    await register({
      agent_id: 'p-high',
      capabilities: ['prio'],
      max_concurrency: 10,
      priority: 5,
    });
    expect((await explain('capability=prio')).agent_id).toBe('p-high');
    // Execution-time EWMAs as registry-sync keeps them from completions.
    const keys = reachKeys(prefix);
    await redis.hset(keys.agent('p-high'), 'ewma:prio', '900');
    await redis.hset(keys.agent('p-plain'), 'ewma:prio', '100');
    await register({ agent_id: 'p-third', capabilities: ['prio'], max_concurrency: 10 });
    await redis.hset(keys.agent('p-third'), 'ewma:prio', '110');
    await sync.housekeeper.writeSnapshotNow();
    await router().snapshot.reload();
    const body = await explain('capability=prio');
    expect(body.agent_id).not.toBe('p-high');
    expect(body.candidates.find((c) => c.agent_id === 'p-high')?.score).toBeCloseTo(0.25 - 0.05, 5);
    expect(body.candidates[body.candidates.length - 1]?.agent_id).toBe('p-high');
  });
});

describe('routing rules on submit', () => {
  it('routes by tags and region, sticks a session to its agent, and records why in `sent`', async () => {
    await register({ agent_id: 's-1', capabilities: ['chat'], max_concurrency: 100, region: 'eu' });
    await register({ agent_id: 's-2', capabilities: ['chat'], max_concurrency: 100, region: 'eu' });
    await register({
      agent_id: 's-3',
      capabilities: ['chat'],
      max_concurrency: 100,
      region: 'us',
      tags: ['long-context'],
    });
    const tagged = await submit({ capability: 'chat', payload: 1, tags: ['long-context'] });
    expect(tagged.json()).toMatchObject({ agent_id: 's-3' });
    const eu = await submit({
      capability: 'chat',
      payload: 1,
      region: 'eu',
      region_policy: 'strict',
    });
    expect(eu.json<{ agent_id: string }>().agent_id).toMatch(/^s-[12]$/);

    const first = await submit({
      capability: 'chat',
      payload: 'hi',
      session_id: 'conv-9',
      region: 'eu',
    });
    const agent = first.json<{ agent_id: string }>().agent_id;
    for (let i = 0; i < 6; i++) {
      const next = await submit({ capability: 'chat', payload: i, session_id: 'conv-9' }, i % 3);
      expect(next.json<{ agent_id: string }>().agent_id).toBe(agent);
    }

    const view = await router().app.inject({
      url: `/v1/tasks/${first.json<{ task_id: string }>().task_id}`,
    });
    const sent = view
      .json<{ timeline: { stage: string; routing?: Record<string, unknown> }[] }>()
      .timeline.find((e) => e.stage === 'sent');
    expect(sent?.routing).toMatchObject({
      candidates: expect.any(Number),
      load: expect.any(Number),
      score: expect.any(Number),
      snapshot_age_ms: expect.any(Number),
    });
    expect(sent?.routing?.runner_up).toMatch(/^s-[12]$/);
  });

  it('refuses unknown tags with NO_AGENT naming them, and rejects a malformed request', async () => {
    const res = await submit({
      capability: 'chat',
      payload: 1,
      tags: ['quantum'],
      on_no_agent: 'reject',
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'NO_AGENT' });
    expect(res.json<{ message: string }>().message).toContain('quantum');
    expect(
      (await submit({ capability: 'chat', payload: 1, region_policy: 'maybe' })).statusCode,
    ).toBe(400);
  });
});
