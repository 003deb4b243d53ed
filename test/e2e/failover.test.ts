/**
 * Failover under load on the seed's deployment (`npm start -- --cluster`'s topology: a Redis
 * Cluster of 3 masters with a replica each, 2 registry-sync instances and 3 routers behind
 * nginx, three agents). A caller sends a steady stream of tasks through nginx, retrying each
 * refused or broken submission with the same task_id, while the test SIGKILLs
 *   1. a router (started again 5 s later): nginx moves on;
 *   2. the registry-sync instance holding the housekeeping lock: the other takes the lock within
 *      its lease and claims the killed one's acks within twice the lease;
 *   3. the Redis master holding an agent's inbox: its replica takes over (the node comes back as
 *      a replica). Replication is asynchronous, so a write the master answered but had not
 *      passed on is lost with it. The caller recovers those: a task it has no result for a while
 *      after the run is submitted again with the same task_id (200: it exists; 202: it was lost,
 *      and is accepted again).
 * Every accepted task must end completed, with one completion on its callback topic. Prints the
 * figures (accepted, completed, lost, duplicate completions delivered, longest stall) and writes
 * them to test/artifacts/failover.json. Runs once, in the standalone leg: it starts its own
 * cluster.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import { entryOf, startClusterTopology, type ClusterTopology } from '@agent-reach/launcher';
import { reachKeys, type CallbackItem } from '@agent-reach/protocol';
import {
  randomPrefix,
  startNodeService,
  testRedisMode,
  testServices,
  waitFor,
  type LocalCluster,
  type ServiceProcess,
} from '@agent-reach/testkit';
import { FAST_LEASES } from '../support/stack.ts';
import { CallbackWatcher, readTopic } from '../support/chaos/callbacks.ts';
import { SubmitDriver } from '../support/chaos/driver.ts';
import { CHAOS_CAPABILITY } from '../support/chaos/exec-log.ts';
import { masterPortOf, slotsOf, tookOver } from '../support/failover/cluster-watch.ts';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const AGENTS = ['fo-1', 'fo-2', 'fo-3'];
const TOPICS = Array.from({ length: 4 }, (_, i) => `failover-${i}`);
const RATE_PER_S = 20;
/** At most this many seconds of traffic; it ends AFTER_CHAOS_MS after the last step. */
const TRAFFIC_S = 120;
/** Each step of the chaos waits this long after the one before it has finished. */
const STEP_GAP_MS = 5_000;
const AFTER_CHAOS_MS = 8_000;
/** The housekeeping lock's lease with REACH_SWEEP_MS=100: max(3 × 100, 3000). */
const LOCK_LEASE_MS = 3000;
/** After the traffic, how long a caller waits for a result before submitting the task again. */
const RESUBMIT_AFTER_MS = 15_000;
const SETTLE_BY_MS = 40_000;

const ENV: Record<string, string> = {
  ...FAST_LEASES,
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  REACH_RECEIPT_TIMEOUT_MS: '3000',
  REACH_EXEC_LEASE_MS: '3000',
  REACH_RETRY_BASE_MS: '100',
  REACH_RETRY_CAP_MS: '2000',
  REACH_MAX_ATTEMPTS: '10',
  REACH_DISPATCH_GRACE_MS: '2000',
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let dir = '';
let topo: ClusterTopology | undefined;
let redis: Cluster | undefined;
const agents: ServiceProcess[] = [];
let prefix = '';

describe.skipIf(testRedisMode() === 'cluster')('failover on the cluster topology', () => {
  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    dir = await mkdtemp(join(tmpdir(), 'reach-failover-'));
    prefix = randomPrefix();
    const services = testServices();
    topo = await startClusterTopology({
      stateDir: dir,
      env: {
        ...ENV,
        REACH_PREFIX: prefix,
        INFLUX_URL: services.influxUrl,
        INFLUX_API: 'v1',
        INFLUX_BUCKET: services.influxBucket,
      },
    });
    const t = topo;
    redis = new Cluster(
      t.seeds.split(',').map((s) => ({ host: s.split(':')[0], port: Number(s.split(':')[1]) })),
    );
    redis.on('error', () => undefined);
    for (const id of AGENTS) {
      agents.push(
        await startNodeService({
          name: id,
          entry: entryOf('echo-agent'),
          env: {
            ...ENV,
            ...t.redisEnv,
            REACH_PREFIX: prefix,
            REACH_AGENT_ID: id,
            REACH_REGISTRY_URL: t.registryUrl,
            REACH_CAPABILITY: CHAOS_CAPABILITY,
            // Room enough that a 429 means slots held by the failover, not a slow shared machine.
            MAX_CONCURRENCY: '32',
            DELAY_MS: '50',
          },
        }),
      );
    }
    // An agent that exits fails the start at once, not at the deadline.
    const anExit = Promise.race(
      agents.map((a) => a.exited.then(() => Promise.reject(new Error(`agent ${a.name} exited`)))),
    );
    anExit.catch(() => undefined);
    const registered = waitFor(
      async () => {
        const res = await fetch(`${t.registryUrl}/v1/agents`).catch(() => undefined);
        const text = res ? await res.text() : '';
        return AGENTS.every((id) => text.includes(`"${id}"`));
      },
      { timeoutMs: 60_000, intervalMs: 200, message: 'agents registered through nginx' },
    );
    await Promise.race([registered, anExit]).catch((err: unknown) => {
      const tails = [...agents, ...t.registries, ...t.routers].map(
        (a) =>
          `--- ${a.name}\n${a
            .output()
            .split('\n')
            .slice(-4)
            .map((l) => l.slice(0, 600))
            .join('\n')}`,
      );
      throw new Error(`${String(err)}\n${tails.join('\n')}`);
    });
  }, 150_000);

  afterAll(async () => {
    const steps: [string, () => Promise<unknown>][] = [
      ['agents', () => Promise.all(agents.map((a) => a.stop()))],
      ['redis client', async () => redis?.disconnect()],
      ['topology', async () => topo?.stop()],
      ['folder', () => rm(dir, { recursive: true, force: true })],
    ];
    for (const [what, step] of steps) {
      try {
        await step();
      } catch (err: unknown) {
        console.warn(`failover cleanup: ${what} failed: ${String(err)}`);
      }
    }
  }, 60_000);

  it('loses and duplicates nothing while a router, the registry-sync leader and a Redis master are SIGKILLed', async () => {
    const t = topo!;
    const cluster = t.cluster as LocalCluster;
    const r = redis!;
    const keys = reachKeys(prefix);
    const driver = new SubmitDriver({
      routers: [t.routerUrl],
      total: RATE_PER_S * TRAFFIC_S,
      ratePerS: RATE_PER_S,
      maxInFlight: 60,
      topics: TOPICS,
      idPrefix: `fo-${prefix}`,
      giveUpMs: 60_000,
      requestTimeoutMs: 5000,
    });
    const watcher = new CallbackWatcher([t.routerUrl], TOPICS);
    watcher.start();
    const t0 = Date.now();
    const gap = () => sleep(STEP_GAP_MS);
    const events: Record<string, number> = {};

    const chaos = (async () => {
      await sleep(8_000);
      t.routers[0]!.kill('SIGKILL');
      events.router_killed_at_ms = Date.now() - t0;
      await gap();
      await t.restart('router', 0);

      await gap();
      const holder = await r.get(keys.lock('housekeeping'));
      const leader = t.registries.findIndex((p) => holder === `sync-${p.pid}`);
      expect(leader, `lock holder ${holder}`).toBeGreaterThanOrEqual(0);
      const killedAt = Date.now();
      t.registries[leader]!.kill('SIGKILL');
      events.leader_killed_at_ms = killedAt - t0;
      await waitFor(
        async () => {
          const now = await r.get(keys.lock('housekeeping')).catch(() => holder);
          return now !== null && now !== holder;
        },
        {
          timeoutMs: 4 * LOCK_LEASE_MS,
          intervalMs: 50,
          message: 'the other instance takes the lock',
        },
      );
      events.lock_taken_over_ms = Date.now() - killedAt;
      await sleep(2 * STEP_GAP_MS);
      await t.restart('registry-sync', leader);

      await gap();
      const port = await masterPortOf(cluster, r, keys.inbox(AGENTS[0]!));
      const slots = await slotsOf(cluster, port);
      const masterKilledAt = Date.now();
      await cluster.killNode(port);
      events.master_killed_at_ms = masterKilledAt - t0;
      await waitFor(() => tookOver(cluster, port, slots), {
        timeoutMs: 20_000,
        intervalMs: 100,
        message: `a replica takes over from the master on ${port}`,
      });
      events.replica_promoted_ms = Date.now() - masterKilledAt;
      await sleep(2 * STEP_GAP_MS);
      await cluster.restartNode(port);
      events.chaos_done_at_ms = Date.now() - t0;
      await sleep(AFTER_CHAOS_MS);
      driver.finish();
    })();
    // A failed step ends the traffic too, so the test ends with its figures.
    chaos.catch(() => driver.finish());

    await Promise.all([driver.run(), chaos]);
    const accepted = driver.accepted();
    const trafficEndMs = Date.now() - t0;

    // The caller's recovery: a task with no result a while after the traffic is submitted
    // again with its task_id (200: it exists, let it finish; 202: its write was lost).
    const done = () => accepted.every((s) => watcher.isFinal(s.task_id));
    await waitFor(done, { timeoutMs: RESUBMIT_AFTER_MS, intervalMs: 250 }).catch(() => undefined);
    const resubmit: Record<string, number> = {};
    for (const s of accepted.filter((x) => !watcher.isFinal(x.task_id))) {
      const res = await fetch(`${t.routerUrl}/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          task_id: s.task_id,
          capability: CHAOS_CAPABILITY,
          payload: { again: true },
          callback_topic: s.topic,
        }),
      });
      resubmit[res.status] = (resubmit[res.status] ?? 0) + 1;
    }
    await waitFor(done, { timeoutMs: SETTLE_BY_MS, intervalMs: 250 }).catch(() => undefined);
    await watcher.stop();

    // Everything the topics hold, read in full: what a caller was delivered.
    const byTask = new Map<string, CallbackItem[]>();
    for (const topic of TOPICS) {
      for (const item of await readTopic([t.routerUrl], topic)) {
        byTask.set(item.task_id, [...(byTask.get(item.task_id) ?? []), item]);
      }
    }
    const completions = (id: string) =>
      (byTask.get(id) ?? []).filter((x) => x.status === 'completed');
    const completed = accepted.filter((s) => completions(s.task_id).length > 0).length;
    const dead = accepted.filter((s) =>
      (byTask.get(s.task_id) ?? []).some((x) => x.status === 'dead'),
    ).length;
    const final = (id: string) =>
      (byTask.get(id) ?? []).some((x) => x.status === 'completed' || x.status === 'dead');
    const lost = accepted.filter((s) => !final(s.task_id)).length;
    const duplicates = accepted.filter((s) => completions(s.task_id).length > 1).length;
    const times = [...byTask.values()]
      .flatMap((items) => items.filter((x) => x.status === 'completed'))
      .map((x) => x.completed_at)
      .sort((a, b) => a - b);
    let longestStallMs = 0;
    let stallAtMs = 0;
    for (let i = 1; i < times.length; i++) {
      const gap = times[i]! - times[i - 1]!;
      if (gap > longestStallMs) [longestStallMs, stallAtMs] = [gap, times[i - 1]! - t0];
    }
    const longestAcceptMs = Math.max(
      ...accepted.map((s) => (s.acceptedAt ?? s.firstTryAt) - s.firstTryAt),
    );
    const tooMany = Object.entries(driver.perSecond).flatMap(([sec, tries]) =>
      Object.keys(tries)
        .filter((k) => k.startsWith('429'))
        .map(() => Number(sec) * 1000),
    );
    const figures = {
      submitted: driver.submissions.length,
      accepted: accepted.length,
      completed,
      dead,
      lost,
      duplicate_completions_delivered: duplicates,
      longest_stall_ms: longestStallMs,
      longest_stall_at_ms: stallAtMs,
      longest_wait_for_accept_ms: longestAcceptMs,
      resubmitted: resubmit,
      tries: driver.tries,
      seconds_with_429: tooMany.map((ms) => ms / 1000),
      traffic_ms: trafficEndMs,
      ...events,
    };
    console.log(`failover figures: ${JSON.stringify(figures)}`);
    await writeFile(join(ARTIFACTS, 'failover.json'), `${JSON.stringify(figures, null, 2)}\n`);
    // The services' last lines, to read when a figure is off.
    const logs = [...t.registries, ...t.routers, ...agents, t.nginx].map(
      (p) => `--- ${p.name} (pid ${p.pid})\n${p.output()}`,
    );
    await writeFile(join(ARTIFACTS, 'failover-logs.txt'), `${logs.join('\n')}\n`);

    expect(accepted.length).toBe(driver.submissions.length);
    expect(lost).toBe(0);
    expect(duplicates).toBe(0);
    expect(completed).toBe(accepted.length);
    // The lock moves within its lease (plus a sweep interval to notice).
    expect(events.lock_taken_over_ms).toBeLessThanOrEqual(LOCK_LEASE_MS + 500);
    // 429s that follow the leader's death (slots held by acks the dead instance had read) end
    // once its acks are claimed: within twice the lease, plus a second's claim interval and the
    // one-second buckets. (Later ones, on a loaded machine, are printed above.)
    const leaderAt = events.leader_killed_at_ms ?? 0;
    const bound = leaderAt + 2 * LOCK_LEASE_MS + 2000;
    const afterLeader = tooMany.filter((ms) => ms >= leaderAt - 1000 && ms < leaderAt + 20_000);
    expect(afterLeader.filter((ms) => ms > bound)).toEqual([]);
  }, 240_000);
});
