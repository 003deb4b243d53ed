import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startOwnRedis, type OwnRedis } from '@agent-reach/testkit';
import { sleep } from './clock.ts';
import { measureRun, type RunRecord } from './measure.ts';
import type { Mode } from './load/protocol.ts';
import type { BenchOptions, SystemName } from './options.ts';
import { rotate, runPlan, warmupPlan } from './plan.ts';
import { ChildSet } from './proc/children.ts';
import { recordPid, stopLeftovers } from './proc/pidfiles.ts';
import { allowedCpus, pinProcess, planPinning, type PinningPlan } from './proc/pin.ts';
import { RedisGauge } from './proc/redis-nodes.ts';
import { startBullmq } from './stack/bullmq.ts';
import { startFloor } from './stack/floor.ts';
import { startReach } from './stack/reach.ts';
import { startRouterFloor } from './stack/router-floor.ts';
import type { RunningSystem } from './stack/running.ts';
import { startTopology, type Topology } from './topology/start.ts';

/** Where sessions keep pid files and profiles (git-ignored). */
export const WORK_DIR = fileURLToPath(new URL('../.reach/', import.meta.url));

/** Fewer commands than this in 250 ms: only the idle systems' background work is left. */
const QUIET_COMMANDS_PER_250_MS = 150;

/** Every measured run: `records[system][runKey]` holds one record per repetition. */
export type Records = Partial<Record<SystemName, Record<string, RunRecord[]>>>;

/**
 * One bench session: a private Redis, every system's processes, and the interleaved runs.
 * `close()` stops everything it started, by pid, whatever state it is in.
 */
export class Session {
  readonly dir = join(WORK_DIR, 'sessions', String(process.pid));
  readonly children = new ChildSet(this.dir);
  private redis: OwnRedis | undefined;
  private admin: Redis | undefined;
  /** The session's one Redis. */
  private gauge: RedisGauge | undefined;
  /** Every Redis node of the session (quiet checks). */
  private allNodes: RedisGauge | undefined;
  /** `--topology cluster`: the cluster and what runs on it. */
  private topology: Topology | undefined;
  /** `--modes router-only`: where its processes run. */
  private pinning: PinningPlan | undefined;
  private closing: Promise<void> | undefined;
  readonly systems: RunningSystem[] = [];

  constructor(
    private readonly opts: BenchOptions,
    private readonly log: (line: string) => void,
    /** Where the router and registry-sync write CPU profiles, when profiling. */
    readonly profileDir?: string,
  ) {}

  /** Starts Redis and the systems. */
  async start(): Promise<void> {
    await stopLeftovers(join(WORK_DIR, 'sessions'), this.log);
    await mkdir(this.dir, { recursive: true });
    await writeFile(
      join(this.dir, 'owner.pid'),
      `${process.pid} ${process.argv[1] ?? 'main.ts'}\n`,
    );
    this.redis = await startOwnRedis();
    await recordPid(this.dir, 'redis-server', this.redis.pid(), 'redis-server');
    const admin = new Redis(this.redis.url, { maxRetriesPerRequest: 2 });
    this.admin = admin;
    const version = (await admin.info('server')).match(/redis_version:(\S+)/)?.[1] ?? '?';
    this.log(`redis-server ${version} on ${this.redis.url} (pid ${this.redis.pid()})`);
    this.gauge = new RedisGauge([{ name: 'redis', pid: this.redis.pid(), admin }]);
    this.allNodes = this.gauge;
    const { children, opts } = this;
    const url = this.redis.url;
    const t0 = Date.now();
    if (opts.topology === 'cluster') {
      this.topology = await startTopology({
        children,
        dir: this.dir,
        redisUrl: url,
        redis: this.gauge,
        opts,
        log: this.log,
      });
      this.systems.push(...this.topology.systems);
      this.allNodes = new RedisGauge([...this.gauge.nodes, ...this.topology.cluster.nodes]);
      this.log(`every system up in ${Date.now() - t0} ms`);
      return;
    }
    if (opts.routerOnly) {
      this.pinning = planPinning();
      if (this.pinning.pinned) pinProcess(this.redis.pid(), this.pinning.cpus.rest);
      else this.log(`not pinning the processes: ${this.pinning.why}`);
    }
    // The systems start side by side (start-up is mostly tsx compiling), then stay in this order.
    const started = await Promise.allSettled(
      opts.systems.map((name) => this.startSystem(name, admin, url)),
    );
    for (const s of started) {
      if (s.status === 'rejected') throw s.reason;
      this.systems.push(s.value);
      this.log(
        `${s.value.name} up: ${s.value.processes.map((p) => `${p.name}(${p.pid})`).join(' ')}`,
      );
    }
    if (this.pinning?.pinned) {
      // As the kernel has it, not as asked: a pinning that did not take shows here.
      const procs = [
        { name: 'redis-server', pid: this.redis.pid() },
        ...this.systems.flatMap((s) => s.processes),
      ];
      this.log(`CPUs allowed: ${procs.map((p) => `${p.name} ${allowedCpus(p.pid)}`).join(', ')}`);
    }
    this.log(`every system up in ${Date.now() - t0} ms`);
  }

  /** Starts one system of the comparison, of `--modes relay` or of `--modes router-only`. */
  private startSystem(name: SystemName, admin: Redis, url: string): Promise<RunningSystem> {
    const { children, opts } = this;
    const profile = this.profileDir ? { profileDir: this.profileDir } : {};
    const pin = this.pinning?.pinned ? this.pinning.cpus : undefined;
    switch (name) {
      case 'relay-http':
      case 'relay-a2a':
        return startReach({
          children,
          redisUrl: url,
          opts,
          name,
          prefix: `bench-${name}`,
          endpoints: {
            kind: name === 'relay-http' ? 'http' : 'a2a',
            agents: opts.relay === 'fleet' ? opts.agents : opts.workers,
          },
        });
      case 'reach':
      case 'reach-auth':
        return startReach({
          children,
          redisUrl: url,
          opts,
          auth: name === 'reach-auth',
          traceGc: opts.traceGc,
          ...profile,
        });
      case 'router':
        // The router alone on its core, fed by a stub agent that costs next to nothing.
        return startReach({
          children,
          redisUrl: url,
          opts,
          name,
          procPrefix: 'ro',
          stubAgents: true,
          traceGc: opts.traceGc,
          ...(pin ? { pin } : {}),
          ...profile,
        });
      case 'router-floor':
        return startRouterFloor(children, admin, url, opts, pin);
      case 'bullmq':
        return startBullmq(children, url, opts);
      case 'floor':
        return startFloor(children, admin, url, opts);
      default:
        throw new Error(`${name} is not started here`);
    }
  }

  /** `--modes router-only`: whether its processes are pinned, and where. */
  pinningPlan(): PinningPlan | undefined {
    return this.pinning;
  }

  /** The session's Redis: its pid, port and an admin connection (`--modes relay-fleet`). */
  ownRedis(): { pid: number; port: number; admin: Redis; gauge: RedisGauge } {
    if (!this.redis || !this.admin || !this.gauge) throw new Error('session not started');
    return {
      pid: this.redis.pid(),
      port: Number(new URL(this.redis.url).port),
      admin: this.admin,
      gauge: this.gauge,
    };
  }

  /** `--topology cluster`: per cluster system, which master holds each one-slot key every task touches. */
  placements(): Partial<Record<SystemName, string>> {
    return this.topology?.placements ?? {};
  }

  /** Warms every system up, then runs the repetitions, the systems interleaved run by run. */
  async run(): Promise<Records> {
    const gauge = this.gauge;
    if (!gauge) throw new Error('session not started');
    let seq = 0;
    /** Tasks and submission requests each caller has sent so far (for `batchLike`). */
    const sent = new Map<SystemName, { tasks: number; requests: number }>();
    const batchOf = (name: SystemName | undefined): { maxBatch?: number } => {
      const s = name ? sent.get(name) : undefined;
      return s && s.requests > 0 ? { maxBatch: Math.max(1, Math.round(s.tasks / s.requests)) } : {};
    };
    const runOnce = async (
      system: RunningSystem,
      kind: ReturnType<typeof runPlan>[number],
    ): Promise<RunRecord> => {
      // The previous run's stragglers are worked off before their system is frozen.
      await this.quiesce();
      await this.focus(system, kind.req.mode);
      await system.betweenRuns();
      await this.quiesce();
      const id = `${system.name}-${kind.key}-${process.pid}-${seq++}`;
      // Read outside the measured window, as the CPU times are.
      const roomBefore = await system.roomEntries?.();
      const rec = await measureRun(
        system,
        system.redis ?? gauge,
        { id, ...kind.req, ...batchOf(system.batchLike) },
        kind.timeoutMs,
      );
      if (system.gc) rec.gc = await system.gc.within(rec.window);
      const roomAfter = await system.roomEntries?.();
      if (roomBefore !== undefined && roomAfter !== undefined) rec.queued = roomAfter - roomBefore;
      const { requests, submitted, retries } = rec.result;
      if (requests) {
        const s = sent.get(system.name) ?? { tasks: 0, requests: 0 };
        sent.set(system.name, {
          tasks: s.tasks + submitted + retries,
          requests: s.requests + requests,
        });
      }
      return rec;
    };
    for (const system of this.systems) {
      for (const kind of warmupPlan(this.opts)) {
        const rec = await runOnce(system, kind);
        const r = rec.result;
        const problems =
          r.failed > 0
            ? `, ${r.failed} failed (${r.firstError ?? '?'})`
            : r.timedOut
              ? `, ${r.submitted - r.completed} without result`
              : '';
        this.log(
          `warm-up ${system.name} ${kind.key}: ${r.completed} tasks, ${Math.round(r.tps)} tasks/s${problems}`,
        );
      }
    }
    const records: Records = {};
    const plan = runPlan(this.opts);
    for (let rep = 0; rep < this.opts.reps; rep++) {
      for (const kind of plan) {
        for (const system of rotate(this.systems, rep)) {
          const rec = await runOnce(system, kind);
          const bySystem = (records[system.name] ??= {});
          (bySystem[kind.key] ??= []).push(rec);
          const r = rec.result;
          const problems = [
            r.failed > 0 ? `${r.failed} failed (${r.firstError ?? ''})` : '',
            r.timedOut ? `${r.submitted - r.completed - r.failed} without result` : '',
            r.retries > 0 ? `${r.retries} retries (first: ${r.firstRetry ?? '?'})` : '',
            rec.queued ? `${rec.queued} through the waiting room` : '',
          ].filter(Boolean);
          this.log(
            `rep ${rep + 1}/${this.opts.reps} ${kind.key.padEnd(10)} ${system.name.padEnd(6)} ${String(Math.round(r.tps)).padStart(6)} tasks/s ` +
              `p50 ${r.done.p50.toFixed(2)} ms p99 ${r.done.p99.toFixed(2)} ms${problems.length ? `  ! ${problems.join('; ')}` : ''}`,
          );
        }
      }
    }
    return records;
  }

  /**
   * Lets only what a run of `system` in `mode` uses work during it. Redis' CPU and command counts
   * are server-wide, so every other system's processes are frozen (SIGSTOP: their heartbeats,
   * sweeps and blocked reads would be charged to this run), and so are the system's own http-only
   * processes (BullMQ's and the floor's gateways) outside the http mode. Then its caller sets up
   * what the mode needs (BullMQ's caller follows QueueEvents only outside the http mode).
   */
  private async focus(system: RunningSystem, mode: Mode): Promise<void> {
    const used = system.processes.filter((p) => mode === 'http' || !system.httpOnly.includes(p));
    for (const other of this.systems)
      for (const p of other.processes) if (!used.includes(p)) this.children.pause(p);
    const woken = used.filter((p) => this.children.resume(p));
    if (woken.length > 0) await system.awake();
    system.caller.send({ type: 'prepare', mode });
    const reply = await system.caller.next(
      (m) => m.type === 'prepared' && m['mode'] === mode,
      30_000,
      `the caller to prepare for ${mode}`,
    );
    if (typeof reply['error'] === 'string')
      throw new Error(`${system.name} caller could not prepare for ${mode}: ${reply['error']}`);
  }

  /**
   * Waits until Redis is nearly idle (background work only: heartbeats, sweeps, blocked reads),
   * so a run never starts while the previous one's stragglers are still being worked off. Gives
   * up after `drainMs` and says so.
   */
  private async quiesce(): Promise<void> {
    const nodes = this.allNodes;
    if (!nodes) return;
    const deadline = Date.now() + this.opts.drainMs;
    let last = await nodes.commandsProcessed();
    for (;;) {
      await sleep(250);
      const now = await nodes.commandsProcessed();
      if (now - last < QUIET_COMMANDS_PER_250_MS) return;
      if (Date.now() > deadline) {
        this.log(
          `Redis still busy (${now - last} commands in 250 ms) after ${this.opts.drainMs / 1000} s; starting the next run anyway`,
        );
        return;
      }
      last = now;
    }
  }

  /** Stops every process and Redis, newest first; idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled(this.systems.map(async (s) => s.stop?.()));
      await this.children.stopAll();
      this.admin?.disconnect();
      await this.topology?.stop();
      await this.redis?.stop();
      await rm(this.dir, { recursive: true, force: true });
    })();
    return this.closing;
  }

  /** When the orchestrator must exit at once: SIGKILL every child and Redis. */
  killNow(): void {
    for (const s of this.systems) s.killNow?.();
    this.children.killAllNow();
    this.topology?.killNow();
    try {
      this.redis?.kill('SIGKILL');
    } catch {
      // gone
    }
  }
}
