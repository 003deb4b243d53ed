/**
 * Chaos: 2,000 tasks through two routers to four agent processes while agents are SIGKILLed
 * and restarted every few seconds, one agent is SIGSTOPped past the offline bound and resumed,
 * a router is SIGKILLed and restarted, and Redis (AOF, appendfsync always) is SIGKILLed and
 * restarted, and about once a second the newest accepted task is cancelled; every 10th task is
 * delayed (`delay_ms`) and a schedule fires a task every second throughout. Every accepted task
 * must end completed, dead or cancelled (each cancel answered 202 ends cancelled, with no
 * completion on its topic), no task_id may reach a callback topic completed twice, and the
 * paused agent's late results must be refused. As a caller would, the test submits any accepted
 * task with no result after the traffic again with the same task_id, and prints how many of these
 * re-submissions were accepted anew (202: the write was lost in the Redis kill, which a cluster
 * master may lose and a standalone Redis must not); a task still without a result after that
 * counts as lost. Prints one line
 * of figures and writes them to test/artifacts/chaos.json (chaos-cluster*.json on the cluster leg
 * of `npm test`, where Redis is a 3-master cluster of the test's own and the Redis kill takes down
 * the master holding an agent's inbox).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  watchdogMember,
  type CallbackItem,
  type ReachKeys,
  type TaskView,
} from '@agent-reach/protocol';
import {
  onFreePort,
  startNodeService,
  testServices,
  waitFor,
  type ServiceProcess,
} from '@agent-reach/testkit';
import { FAST_LEASES, startRouter, startStack, type Stack } from '../support/stack.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { startChaosRedis, type ChaosRedis } from '../support/chaos/redis.ts';
import { CallbackWatcher, readTopic } from '../support/chaos/callbacks.ts';
import { SubmitDriver, type Submission } from '../support/chaos/driver.ts';
import { ExecTail, readExecutions } from '../support/chaos/exec-log.ts';
import {
  computeFigures,
  figuresLine,
  writeFigures,
  type Outage,
} from '../support/chaos/figures.ts';
import { ChaosFleet } from '../support/chaos/fleet.ts';
import {
  SCHEDULE_TOPIC,
  scheduleFigures,
  startSchedule,
  stopSchedule,
} from '../support/chaos/schedule.ts';
import { CHAOS_PLAN, runPlan, type ChaosStep } from '../support/chaos/plan.ts';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const ROUTER_ENTRY = fileURLToPath(new URL('../../apps/router/src/server.ts', import.meta.url));
/** The cluster leg keeps its own artifacts beside the standalone leg's. */
const LEG_SUFFIX = testServices().redisClusterNodes ? '-cluster' : '';
const EXEC_LOG = `${ARTIFACTS}chaos${LEG_SUFFIX}-exec.log`;
const TASKS = 2000;
const MAX_ATTEMPTS = 6;
const AGENTS = ['chaos-a0', 'chaos-a1', 'chaos-a2', 'chaos-a3'];
const TOPICS = Array.from({ length: 8 }, (_, i) => `chaos-${i}`);
/**
 * Time budget after traffic starts, so the test always ends with its figures well within the
 * 240 s test timeout: no new submission tries after SUBMIT_BY_MS, and the wait for every accepted
 * task to be final ends by SETTLE_BY_MS (whatever is not final then counts as lost).
 */
const SUBMIT_BY_MS = 130_000;
const SETTLE_BY_MS = 175_000;
/** Of SETTLE_BY_MS, the time left for the tasks re-submitted after the first wait to end. */
const RESUBMIT_BUDGET_MS = 20_000;

/** Fast bounds so that recovery happens in seconds. */
const CHAOS_ENV: Record<string, string> = {
  ...FAST_LEASES,
  REACH_RECEIPT_TIMEOUT_MS: '3000',
  REACH_CONSUME_BOUND_MS: '2000',
  REACH_RETRY_BASE_MS: '100',
  REACH_RETRY_CAP_MS: '2000',
  REACH_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
  REACH_PROBE_MS: '1000',
  REACH_DISPATCH_GRACE_MS: '2000',
};

let redis: ChaosRedis | undefined;
let stack: Stack | undefined;
let routerB: ServiceProcess | undefined;
let routerBPort = 0;
let fleet: ChaosFleet | undefined;
let probe: TestRedis | undefined;

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(EXEC_LOG, '');
  redis = await startChaosRedis();
  stack = await startStack({
    redisUrl: redis.redisUrl,
    ...(redis.redisClusterNodes ? { redisClusterNodes: redis.redisClusterNodes } : {}),
    env: CHAOS_ENV,
  });
  const env = stack.env;
  ({ port: routerBPort, started: routerB } = await onFreePort('router-b', (port) =>
    startRouter(env, port),
  ));
  probe = connectRedis(redis, { maxRetriesPerRequest: 1 });
  probe.on('error', () => undefined);
  fleet = new ChaosFleet({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: redis.redisUrl,
    redisClusterNodes: redis.redisClusterNodes ?? '',
    execLog: EXEC_LOG,
    maxConcurrency: 24,
  });
  for (const id of AGENTS) await fleet.spawn(id);
  const f = fleet;
  await waitFor(() => f.allRegistered(), {
    timeoutMs: 60_000,
    intervalMs: 100,
    message: 'chaos agents registered',
  }).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${f.outputs(10)}`);
  });
}, 120_000);

afterAll(async () => {
  // Everything by pid, each on its own, so one failure does not leave the rest running.
  const steps: [string, () => Promise<unknown>][] = [
    ['agents', async () => fleet?.stopAll()],
    ['router B', async () => routerB?.stop()],
    ['router A', async () => stack?.router.stop()],
    ['registry-sync', async () => stack?.registry.stop()],
    ['probe', async () => probe?.quit()],
    ['redis', async () => redis?.stop()],
  ];
  for (const [what, step] of steps) {
    try {
      await step();
    } catch (err: unknown) {
      console.warn(`chaos cleanup: stopping ${what} failed: ${String(err)}`);
    }
  }
}, 60_000);

/** The `acks_refused:*` counters now (empty when Redis does not answer). */
async function refusedNow(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  try {
    const stats = await probe!.hgetall(stack!.keys.stats());
    for (const [k, v] of Object.entries(stats))
      if (k.startsWith('acks_refused:')) out[k.slice('acks_refused:'.length)] = Number(v);
  } catch {
    // Redis is down at this instant: an empty reading.
  }
  return out;
}

const lateRefused = (c: Record<string, number>) =>
  (c['not_assigned'] ?? 0) + (c['stale_epoch'] ?? 0);

/** GET /v1/tasks/:id, through whichever router answers; undefined past `until` (epoch ms). */
async function viewOf(
  routers: readonly string[],
  taskId: string,
  i: number,
  until: number,
): Promise<TaskView | undefined> {
  for (let attempt = 0; attempt < 4 && Date.now() < until; attempt++) {
    try {
      const res = await fetch(`${routers[(i + attempt) % routers.length]}/v1/tasks/${taskId}`, {
        signal: AbortSignal.timeout(3000),
      });
      if (res.status === 200) return (await res.json()) as TaskView;
      if (res.status === 404) return undefined;
      await res.arrayBuffer();
    } catch {
      // next router
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

/** Runs `fn` over `items` with at most `limit` at once. */
async function pool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T, i);
      }
    }),
  );
  return out;
}

/** What Redis holds of an unfinished task: its hash, its due entries, a delivery to an agent. */
async function traceOf(keys: ReachKeys, sub: Submission): Promise<Record<string, unknown>> {
  const id = sub.task_id;
  const ask = <T>(p: Promise<T>) => p.catch((err: unknown) => `error: ${String(err)}`);
  const [status, due, watchdog, ...pending] = await Promise.all([
    ask(probe!.hget(keys.task(id), 'status')),
    ask(probe!.zscore(keys.dueOf(id), id)),
    ask(probe!.zscore(keys.dueOf(id), watchdogMember(id))),
    ...AGENTS.map((a) => ask(probe!.hget(keys.pending(a), id))),
  ]);
  return {
    task_id: id,
    tries: sub.outcomes,
    status,
    due,
    watchdog,
    pending_with: AGENTS.filter((_, i) => pending[i] !== null),
  };
}

it('loses no accepted task and delivers no completion twice through agent, router and Redis kills', async () => {
  const s = stack!;
  const recovery = {
    resubmitted: {} as Record<string, number>,
    recovered: [] as string[],
    traces: [] as Record<string, unknown>[],
  };
  const f = fleet!;
  const own = redis!;
  const routers = [s.routerUrl, `http://127.0.0.1:${routerBPort}`];
  const outages: Outage[] = [];
  const refusedAroundPause = {
    before: {} as Record<string, number>,
    after: {} as Record<string, number>,
  };
  const watcher = new CallbackWatcher(routers, TOPICS);
  const driver = new SubmitDriver({
    routers,
    total: TASKS,
    ratePerS: 35,
    maxInFlight: 24,
    topics: TOPICS,
    idPrefix: `chaos-${Date.now().toString(36)}`,
    giveUpMs: 60_000,
    requestTimeoutMs: 3000,
    delayEvery: 10,
  });
  const scheduleId = await startSchedule(routers);
  let lastTick: number | undefined;
  let failed = false;
  let startedAt = Date.now();
  const progress = (what: string) =>
    console.log(`chaos +${((Date.now() - startedAt) / 1000).toFixed(1)}s: ${what}`);

  // A kill of an agent whose pause step still runs (a loaded box can take 20 s to see it OFFLINE)
  // waits for that step to end: killed while stopped, it would never deliver its late results.
  const pauseSteps = new Map<number, Promise<unknown>>();
  const step = async (st: ChaosStep): Promise<void> => {
    if (st.kind === 'kill-agent') await pauseSteps.get(st.agent);
    const running = runStep(st);
    if (st.kind === 'pause-agent')
      pauseSteps.set(
        st.agent,
        running.catch(() => undefined),
      );
    await running;
  };
  const runStep = async (st: ChaosStep): Promise<void> => {
    progress(
      st.kind === 'kill-agent' || st.kind === 'pause-agent'
        ? `${st.kind} ${AGENTS[st.agent]}`
        : st.kind,
    );
    switch (st.kind) {
      case 'kill-agent':
        await f.killAndRestart(AGENTS[st.agent] as string);
        return;
      case 'pause-agent': {
        const agentId = AGENTS[st.agent] as string;
        const keys = s.keys;
        refusedAroundPause.before = await refusedNow();
        // Pause it in the middle of work (a handler running), so it has results to deliver late.
        const tail = new ExecTail(EXEC_LOG);
        const pause = await f.pauseMidWork(agentId, (pid) => tail.openOf(pid), 5000);
        // Frozen past the offline bound, and until registry-sync has marked it OFFLINE and taken
        // back every task it held, so that what it finishes after SIGCONT is late for sure.
        await new Promise((resolve) => setTimeout(resolve, st.minMs));
        pause.taken_back = await waitFor(
          async () => {
            const [status, pending] = await Promise.all([
              probe!.hget(keys.agent(agentId), 'status'),
              probe!.hlen(keys.pending(agentId)),
            ]);
            return status === 'OFFLINE' && pending === 0;
          },
          { timeoutMs: 20_000, intervalMs: 100 },
        ).catch(() => false);
        f.resume(pause);
        progress(
          `resumed ${agentId} after ${pause.resumed_at - pause.at} ms (OFFLINE and tasks taken back: ${pause.taken_back})`,
        );
        // Its late acks arrive as soon as it runs again: wait for the refusals to show.
        const before = lateRefused(refusedAroundPause.before);
        refusedAroundPause.after = await waitFor(
          async () => {
            const now = await refusedNow();
            return lateRefused(now) > before && now;
          },
          { timeoutMs: 5000, intervalMs: 100 },
        ).catch(() => refusedNow());
        return;
      }
      case 'kill-router': {
        const at = Date.now();
        routerB!.kill('SIGKILL');
        await routerB!.exited;
        // A loaded CI box can take a while to start a process: more time than the usual 20 s.
        routerB = await startNodeService({
          name: `router-${routerBPort}`,
          entry: ROUTER_ENTRY,
          env: { ...s.env, ROUTER_PORT: String(routerBPort) },
          healthUrl: `${routers[1]}/healthz`,
          timeoutMs: 60_000,
        });
        outages.push({ what: 'router-b', at, back_at: Date.now() });
        progress('router B answers again');
        return;
      }
      case 'kill-redis': {
        const at = Date.now();
        // On the cluster leg one master: the one holding agent 0's inbox.
        await own.kill(probe!, s.keys.inbox(AGENTS[0] as string));
        // The outage itself: the time Redis stays away, not a wait for a condition.
        await new Promise((resolve) => setTimeout(resolve, st.downMs));
        await own.restart();
        outages.push({ what: 'redis', at, back_at: Date.now() });
        progress(`${own.kind} answers again`);
        return;
      }
    }
  };

  startedAt = Date.now();
  const submitStop = setTimeout(() => {
    progress('submission budget spent; no new tries');
    driver.stop();
  }, SUBMIT_BY_MS);
  // Twice a second: each agent's unfinished deliveries and the acks backlog, for the detail file.
  const load: { t: number; pending: number[]; acks: number }[] = [];
  const keys = s.keys;
  const sampler = setInterval(() => {
    // One command each, not a pipeline: on a cluster these keys live in different slots.
    const t = Date.now() - startedAt;
    Promise.all([
      ...AGENTS.map((a) => probe!.hlen(keys.pending(a))),
      probe!.xlen(keys.acks()),
    ]).then(
      (r) => load.push({ t, pending: r.slice(0, AGENTS.length), acks: r[AGENTS.length] ?? 0 }),
      () => undefined,
    );
  }, 500);
  // About once a second, the newest accepted task is cancelled (it may be running, or done: 409).
  const cancels = { cancelled: [] as string[], answers: {} as Record<string, number> };
  // Cancels that got no answer (a router or Redis down, a timeout): each may have taken effect.
  const unanswered = new Set<string>();
  let cancelling = true;
  const canceller = (async () => {
    let n = 0;
    while (cancelling) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const last = driver.accepted().at(-1);
      if (!cancelling || last === undefined || cancels.cancelled.includes(last.task_id)) continue;
      let answer = 'error';
      try {
        const res = await fetch(
          `${routers[n++ % routers.length]}/v1/tasks/${last.task_id}/cancel`,
          {
            method: 'POST',
            signal: AbortSignal.timeout(3000),
          },
        );
        answer = String(res.status);
        await res.arrayBuffer();
      } catch {
        // A router or Redis is down right now: counted as no answer.
      }
      cancels.answers[answer] = (cancels.answers[answer] ?? 0) + 1;
      if (answer === '202') cancels.cancelled.push(last.task_id);
      else if (answer === 'error' || answer.startsWith('5')) unanswered.add(last.task_id);
    }
  })();
  watcher.start();
  try {
    const chaos = runPlan(CHAOS_PLAN, startedAt, step, () => failed);
    await Promise.all([
      driver.run().then(async () => {
        cancelling = false;
        await canceller;
        progress(`submissions done: ${driver.accepted().length} accepted`);
      }),
      chaos.then(() => progress('chaos plan done')),
    ]);
    lastTick = await stopSchedule(routers, scheduleId);
    const accepted = driver.accepted();
    const allFinal = () => accepted.every((x) => watcher.isFinal(x.task_id));
    // Bounded: every accepted task must be final well within this once the chaos is over.
    const settleMs = Math.min(
      60_000,
      Math.max(5_000, startedAt + SETTLE_BY_MS - RESUBMIT_BUDGET_MS - Date.now()),
    );
    await waitFor(allFinal, { timeoutMs: settleMs, intervalMs: 250 }).then(
      () => progress('every accepted task is final on its topic'),
      () => progress(`not every accepted task was final after ${settleMs} ms`),
    );
    // The caller's recovery: a task with no result yet is submitted again with its task_id
    // (200: it exists, let it finish; 202: its write was lost, and it is accepted anew).
    const unfinished = accepted.filter((x) => !watcher.isFinal(x.task_id));
    if (unfinished.length > 0) {
      recovery.traces = await pool(unfinished.slice(0, 20), 4, (x) => traceOf(s.keys, x));
      for (const x of unfinished) {
        const outcome = await driver.resubmit(x);
        recovery.resubmitted[outcome] = (recovery.resubmitted[outcome] ?? 0) + 1;
        if (outcome === '202') recovery.recovered.push(x.task_id);
      }
      progress(
        `re-submitted ${unfinished.length} unfinished tasks: ${JSON.stringify(recovery.resubmitted)}`,
      );
      await waitFor(allFinal, {
        timeoutMs: Math.max(5_000, startedAt + SETTLE_BY_MS - Date.now()),
        intervalMs: 250,
      }).then(
        () => progress('every accepted task is final on its topic after the re-submissions'),
        () => progress('not every accepted task was final after the re-submissions'),
      );
    }
  } catch (err: unknown) {
    failed = true;
    driver.stop();
    throw err;
  } finally {
    cancelling = false;
    clearTimeout(submitStop);
    clearInterval(sampler);
    await watcher.stop();
  }

  const accepted = new Map(driver.accepted().map((x) => [x.task_id, x.topic]));
  const ids = [...accepted.keys()];
  const viewList = await pool(ids, 16, (id, i) =>
    viewOf(routers, id, i, startedAt + SETTLE_BY_MS + 25_000),
  );
  const views = new Map(ids.map((id, i) => [id, viewList[i]]));
  const callbacks: CallbackItem[] = (
    await Promise.all(TOPICS.map((t) => readTopic(routers, t, 15_000)))
  ).flat();
  const stats = await probe!.hgetall(s.keys.stats());
  progress('final state read');
  const figures = computeFigures({
    submitted: driver.submissions.length,
    accepted,
    submitTries: driver.tries,
    views,
    callbacks,
    executions: await readExecutions(EXEC_LOG),
    kills: f.kills(),
    pauses: f.pauses,
    outages,
    refusedAroundPause,
    stats,
    maxAttempts: MAX_ATTEMPTS,
    durationMs: Date.now() - startedAt,
    cancels,
  });
  console.log(figuresLine(figures));
  // Writes lost in the Redis kill and recovered by the caller's re-submission with the same
  // task_id, with what Redis held of each such task before it was submitted again.
  console.log(
    `chaos recovery: ${recovery.recovered.length} of ${accepted.size} accepted tasks were lost ` +
      `and accepted again on re-submission (re-submissions: ${JSON.stringify(recovery.resubmitted)})`,
  );
  for (const t of recovery.traces)
    console.log(`chaos unfinished before re-submission: ${JSON.stringify(t)}`);
  // The schedule's ticks: each that became a task is final, completed at most once on its topic.
  const scheduled = await scheduleFigures(
    scheduleId,
    lastTick ?? Date.now(),
    await readTopic(routers, SCHEDULE_TOPIC, 15_000),
    (id) => viewOf(routers, id, 0, Date.now() + 10_000),
  );
  console.log(`chaos schedule: ${JSON.stringify(scheduled)}`);
  await writeFigures(`${ARTIFACTS}chaos${LEG_SUFFIX}.json`, figures);
  // For a human looking into a slow run: when things broke, how the submissions fared each second,
  // and the timelines of the slowest recoveries.
  const detail = {
    started_at: startedAt,
    kills: f.kills().map((k) => ({ ...k, t: k.at - startedAt })),
    pauses: f.pauses.map((p) => ({ ...p, t: p.at - startedAt })),
    submit_tries_per_second: driver.perSecond.map((x, i) => ({ s: i, ...x })),
    load,
    slowest: figures.slowest_recoveries.map((x) => ({ ...x, view: views.get(x.task_id) })),
  };
  await writeFile(
    `${ARTIFACTS}chaos${LEG_SUFFIX}-detail.json`,
    `${JSON.stringify(detail, null, 1)}\n`,
  );

  // Every process's last words, for a failure (and for a look at a slow run).
  const procs = [
    f.outputs(60),
    `--- registry-sync\n${s.registry.output()}`,
    `--- router A\n${s.router.output()}`,
    `--- router B\n${routerB?.output() ?? ''}`,
  ];
  await writeFile(`${ARTIFACTS}chaos${LEG_SUFFIX}-processes.log`, `${procs.join('\n')}\n`);
  if (figures.lost > 0) {
    const lost = figures.lost_sample.map((id) => ({
      id,
      view: views.get(id),
      callbacks: callbacks.filter((c) => c.task_id === id),
    }));
    await writeFile(
      `${ARTIFACTS}chaos${LEG_SUFFIX}-lost.json`,
      `${JSON.stringify(lost, null, 1)}\n`,
    );
  }
  const why = `see ${ARTIFACTS}chaos${LEG_SUFFIX}-lost.json and chaos${LEG_SUFFIX}-processes.log`;
  expect(figures.accepted, 'every submission accepted').toBe(TASKS);
  expect(figures.lost, `lost tasks:\n${why}`).toBe(0);
  // A standalone Redis (AOF, appendfsync always) loses no acknowledged write: nothing there may
  // need the re-submission. A cluster master killed mid-write may (see RELIABILITY.md).
  if (!LEG_SUFFIX) expect(recovery.recovered, 'writes lost on a standalone Redis').toEqual([]);
  expect(figures.completed + figures.dead + figures.cancelled).toBe(TASKS);
  // Every cancel that answered 202 ended cancelled, with no completion on its topic.
  expect(figures.cancel_violations).toBe(0);
  // Beyond those, only tasks whose cancel got no answer may have ended cancelled.
  const cancelledIds = [...accepted.keys()].filter((id) => views.get(id)?.status === 'cancelled');
  const extra = cancelledIds.filter((id) => !cancels.cancelled.includes(id));
  expect(extra.filter((id) => !unanswered.has(id))).toEqual([]);
  expect(figures.duplicate_completions_delivered).toBe(0);
  expect(figures.missing_callbacks).toBe(0);
  expect(scheduled.fired).toBeGreaterThan(0);
  expect(scheduled.lost).toBe(0);
  expect(scheduled.duplicate_completions_delivered).toBe(0);
  // The chaos really happened, and the paused agent's late results were refused.
  expect(figures.chaos.agent_kills).toBe(CHAOS_PLAN.filter((x) => x.kind === 'kill-agent').length);
  expect(figures.chaos.outages.map((o) => o.what).sort()).toEqual(['redis', 'router-b']);
  expect(figures.killed_agent_tasks).toBeGreaterThan(0);
  expect(
    f.pauses.every((p) => p.taken_back),
    'the paused agent was marked OFFLINE and its tasks taken back',
  ).toBe(true);
  // It was paused mid-work, so it finished something after SIGCONT: none of that may count.
  expect(figures.paused.late_results, 'the paused agent delivered results late').toBeGreaterThan(0);
  expect(figures.paused.late_results_accepted, 'late results applied or published').toBe(0);
  expect(figures.refused_late_acks).toBeGreaterThan(0);
}, 240_000);
