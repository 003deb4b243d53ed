/**
 * What registrations and heartbeats cost registry-sync: starts a private redis-server and one
 * registry-sync from dist (build first), registers N agents over HTTP with bounded concurrency,
 * then drives single heartbeats and batched heartbeats for a fixed window each, and prints
 * registry-sync's CPU-ms (utime + stime from /proc/<pid>/stat) per registration, per single
 * heartbeat and per instance renewed in a batch, and registrations/s. Run from the repository
 * root:
 *
 *   node --import tsx apps/registry-sync/scripts/control-plane-cost.ts [--agents 1000]
 *     [--concurrency 32] [--seconds 10] [--batch 500] [--acl] [--cpu-prof <dir>]
 *     [--entry <server.js>] [--instances 2]
 *
 * `--cpu-prof <dir>` writes registry-sync's CPU profile there at its exit, with `phases.json`:
 * each phase's window on the monotonic clock (ms), the clock V8 stamps its samples with, so a
 * profile summary can be cut to one phase (bench/perf/src/profile/summary.ts, `window`).
 * `--entry` runs another build of registry-sync's server.js (a copy of dist kept in the package
 * folder, to compare two builds in alternating runs). `--acl` runs with REACH_AGENT_ACL=on (a Redis user per instance).
 *
 * `--instances N` runs N registry-sync processes behind nginx (least connections, as
 * `npm start -- --cluster` fronts them): every request goes through nginx, and each phase says
 * how the CPU split between the instances; one of them leads housekeeping, so the idle cost sits
 * on that one.
 *
 * Every registration publishes a registry delta of its agent (docs/PROTOCOL.md §7), which reads
 * that agent only. Registrations are measured twice: new instances of a fleet of 20 agents for
 * the window, then the N agents from none (a fleet starting at once). Heartbeats here never
 * change an agent's status, so they publish nothing; `idle` is the fleet's background cost
 * (sweeps, the periodic snapshot, metrics) with no request at all, which the `past idle` figures
 * take off.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import {
  findBinary,
  freePort,
  startLoadBalancer,
  startOwnRedis,
  waitFor,
} from '@agent-reach/testkit';

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '10' },
    batch: { type: 'string', default: '500' },
    acl: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    entry: { type: 'string' },
    instances: { type: 'string', default: '1' },
  },
});
const INSTANCES = Math.max(1, Number(values.instances));
const AGENTS = Number(values.agents);
const CONCURRENCY = Number(values.concurrency);
const WINDOW_MS = Number(values.seconds) * 1000;
const BATCH = Number(values.batch);
/** Agents in the fleet while registrations are measured without the snapshot's O(fleet) cost. */
const SMALL_FLEET = 20;
const PROFILE_DIR = values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined;

/** Milliseconds on the machine-wide monotonic clock (V8's profile clock on Linux). */
const monoMs = (): number => Number(process.hrtime.bigint() / 1000n) / 1000;

/** CPU time of a process so far, ms (user + system, from /proc/<pid>/stat). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  // USER_HZ is 100 on Linux.
  return ticks * 10;
}

/** Runs `work(i)` for i in [0, count) with at most `limit` at once. */
async function bounded(count: number, limit: number, work: (i: number) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
}

/** Runs `work(i)` with `limit` lanes until `ms` have passed; returns how many calls ended. */
async function forWindow(ms: number, limit: number, work: (i: number) => Promise<void>) {
  const end = monoMs() + ms;
  let next = 0;
  const lane = async () => {
    while (monoMs() < end) await work(next++);
  };
  await Promise.all(Array.from({ length: limit }, lane));
  return next;
}

async function post(url: string, body: unknown, token?: string): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const reply: unknown = await res.json();
  if (res.status !== 200)
    throw new Error(`${url} answered ${res.status}: ${JSON.stringify(reply)}`);
  return reply;
}

interface Phase {
  name: string;
  fromMs: number;
  toMs: number;
  cpuMs: number;
  /** CPU-ms of each instance, in the order they were started. */
  perInstance: number[];
  count: number;
  /** SADDs Redis ran in the phase (INFO commandstats): the agents set written again. */
  sadds: number;
}

/** SADDs Redis has run so far (only registrations and heartbeats send them). */
async function saddsRun(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(/cmdstat_sadd:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

async function phase(
  pids: readonly number[],
  redis: Redis,
  name: string,
  run: () => Promise<number>,
  phases: Phase[],
): Promise<Phase> {
  const sadds0 = await saddsRun(redis);
  const cpu0 = pids.map(cpuMs);
  const fromMs = monoMs();
  const count = await run();
  const toMs = monoMs();
  const perInstance = pids.map((pid, i) => cpuMs(pid) - (cpu0[i] ?? 0));
  const cpu = perInstance.reduce((a, b) => a + b, 0);
  const sadds = (await saddsRun(redis)) - sadds0;
  const result = { name, fromMs, toMs, cpuMs: cpu, perInstance, count, sadds };
  phases.push(result);
  return result;
}

async function main(): Promise<void> {
  const redis = await startOwnRedis();
  const syncs: ChildProcess[] = [];
  let front: Awaited<ReturnType<typeof startLoadBalancer>> | undefined;
  try {
    // Spawned here rather than by startNodeService: --cpu-prof is not allowed in NODE_OPTIONS.
    if (PROFILE_DIR) await mkdir(PROFILE_DIR, { recursive: true });
    const profile = PROFILE_DIR
      ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, '--cpu-prof-interval=250']
      : [];
    const entry = values.entry
      ? resolve(values.entry)
      : fileURLToPath(new URL('../dist/server.js', import.meta.url));
    const ports: number[] = [];
    for (let n = 0; n < INSTANCES; n++) {
      const port = await freePort();
      ports.push(port);
      const child = spawn(process.execPath, [...profile, '--conditions=agent-reach-dist', entry], {
        env: {
          ...process.env,
          REDIS_URL: redis.url,
          REGISTRY_PORT: String(port),
          HOST: '127.0.0.1',
          REACH_PREFIX: 'cost',
          LOG_LEVEL: 'info',
          INFLUX_URL: '',
          REACH_AGENT_ACL: values.acl ? 'on' : 'off',
          // Leases past the run: no agent goes SUSPECT while another phase runs.
          REACH_SUSPECT_MS: '600000',
          REACH_OFFLINE_MS: '1200000',
          REACH_CONSUME_BOUND_MS: '600000',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      syncs.push(child);
      await waitFor(
        async () =>
          (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200,
        { timeoutMs: 20_000, message: 'registry-sync /healthz' },
      );
    }
    let base = `http://127.0.0.1:${ports[0]}`;
    if (INSTANCES > 1) {
      const bin = findBinary('nginx');
      if (!bin) throw new Error('nginx not found on PATH; install it: apt-get install nginx-light');
      const port = await freePort();
      front = await startLoadBalancer({
        name: 'cost-nginx',
        bin,
        dir: await mkdtemp(join(tmpdir(), 'cost-nginx-')),
        fronts: [{ name: 'registries', port, upstreamPorts: ports }],
      });
      base = `http://127.0.0.1:${port}`;
    }
    const pids = syncs.map((c) => {
      if (c.pid === undefined) throw new Error('registry-sync did not start');
      return c.pid;
    });
    const stats = new Redis(redis.url);
    const phases: Phase[] = [];
    const tokens: string[] = [];
    const ids = Array.from({ length: AGENTS }, (_, i) => `cost-agent-${i}`);

    // Registrations while the fleet is small: the snapshot each one writes reads a few agents,
    // so this is nearly all the registration's own cost. Each call is a new instance of one of
    // SMALL_FLEET agents (a new epoch, the old instance fenced off).
    const small = await phase(
      pids,
      stats,
      'register-small',
      () =>
        forWindow(WINDOW_MS, CONCURRENCY, async (n) => {
          await post(`${base}/v1/agents/register`, {
            agent_id: `cost-small-${n % SMALL_FLEET}`,
            instance_id: `cost-small-${n}`,
            capabilities: ['cost-echo'],
            max_concurrency: 4,
          });
        }),
      phases,
    );
    const reg = await phase(
      pids,
      stats,
      'register',
      async () => {
        await bounded(AGENTS, CONCURRENCY, async (i) => {
          const reply = (await post(`${base}/v1/agents/register`, {
            agent_id: ids[i],
            instance_id: `${ids[i]}-a`,
            capabilities: ['cost-echo'],
            max_concurrency: 4,
          })) as { token: string };
          tokens[i] = reply.token;
        });
        return AGENTS;
      },
      phases,
    );
    // The fleet's background cost (sweeps, snapshots, metrics) with no request at all.
    const idle = await phase(
      pids,
      stats,
      'idle',
      async () => {
        await new Promise((done) => setTimeout(done, WINDOW_MS));
        return 1;
      },
      phases,
    );
    const single = await phase(
      pids,
      stats,
      'heartbeat',
      () =>
        forWindow(WINDOW_MS, CONCURRENCY, async (n) => {
          const i = n % AGENTS;
          await post(`${base}/v1/agents/${ids[i]}/heartbeat`, { inflight: 0 }, tokens[i]);
        }),
      phases,
    );
    const batches = Math.ceil(AGENTS / BATCH);
    const batched = await phase(
      pids,
      stats,
      'heartbeats',
      async () => {
        // Two batches in flight, as two relays would send them.
        const sent = await forWindow(WINDOW_MS, 2, async (n) => {
          const b = n % batches;
          const beats = ids.slice(b * BATCH, (b + 1) * BATCH).map((agent_id, k) => ({
            agent_id,
            token: tokens[b * BATCH + k] as string,
            inflight: 0,
          }));
          const reply = (await post(`${base}/v1/agents/heartbeats`, { beats })) as {
            acks: { error?: string }[];
          };
          if (reply.acks.some((a) => a.error)) throw new Error('a beat was refused');
        });
        let instances = 0;
        for (let n = 0; n < sent; n++) instances += Math.min(BATCH, AGENTS - (n % batches) * BATCH);
        return instances;
      },
      phases,
    );

    const idleCores = idle.cpuMs / (idle.toMs - idle.fromMs);
    const row = (label: string, p: Phase, per: string) => {
      const ms = p.toMs - p.fromMs;
      return (
        `${label.padEnd(20)} ${String(p.count).padStart(7)} in ${(ms / 1000).toFixed(1).padStart(5)} s  ` +
        `${(p.cpuMs / p.count).toFixed(3).padStart(7)} CPU-ms ${per}, ` +
        `${((p.cpuMs - idleCores * ms) / p.count).toFixed(3)} past idle  ` +
        `(${((p.count * 1000) / ms).toFixed(0)}/s, ${(p.cpuMs / ms).toFixed(2)} cores, ` +
        `${(p.sadds / p.count).toFixed(2)} SADD each)` +
        (INSTANCES > 1
          ? `  [per instance: ${p.perInstance.map((c) => (c / ms).toFixed(2)).join(' / ')} cores]`
          : '')
      );
    };
    process.stdout.write(
      [
        `registry-sync control-plane cost: ${AGENTS} agents, concurrency ${CONCURRENCY}, batches of ${BATCH}${values.acl ? ', REACH_AGENT_ACL=on' : ''}${INSTANCES > 1 ? `, ${INSTANCES} instances behind nginx` : ''}`,
        `idle, ${AGENTS} agents   ${idleCores.toFixed(3)} cores`,
        row(`reg., fleet of ${SMALL_FLEET}`, small, 'per registration'),
        row(`reg., 0→${AGENTS} agents`, reg, 'per registration'),
        row('single heartbeats', single, 'per heartbeat'),
        row('batched heartbeats', batched, 'per instance'),
        '',
      ].join('\n'),
    );
    stats.disconnect();
    if (PROFILE_DIR)
      await writeFile(join(PROFILE_DIR, 'phases.json'), `${JSON.stringify(phases, null, 2)}\n`);
  } finally {
    await front?.stop('SIGTERM', 5000);
    await Promise.all(
      syncs
        .filter((c) => c.exitCode === null)
        .map(async (c) => {
          const exited = new Promise((done) => c.once('exit', done));
          c.kill('SIGTERM');
          await exited;
        }),
    );
    await redis.stop();
  }
}

await main();
