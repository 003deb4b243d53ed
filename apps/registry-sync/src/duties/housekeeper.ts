import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AgentRegistry } from '../registry/agent-registry.ts';
import type { ConsumerJanitor } from '../sweeps/consumer-janitor.ts';
import type { IndexTrimmer } from '../sweeps/index-trimmer.ts';
import type { DueProcessor } from '../sweeps/due-processor.ts';
import type { ScheduleFirer } from './schedule-firer.ts';
import type { PoolDrainer } from '../sweeps/pool-drainer.ts';
import type { Ejector } from '../sweeps/ejector.ts';
import type { InflightSweeper } from '../sweeps/inflight-sweeper.ts';
import type { Prober } from '../sweeps/prober.ts';
import type { DependencyWatch } from '../health/dependency-watch.ts';
import type { HealthSweep } from '../health/health-sweep.ts';
import type { LeaseLock } from '@agent-reach/dispatch';
import type { LeaseSweeper, Transition } from '../sweeps/lease-sweeper.ts';
import type { SnapshotWriter } from './snapshot-writer.ts';
import type { PassMark } from '../commands/pass-mark.ts';

/** Timing of the housekeeping duties. */
export interface HousekeeperSettings {
  sweepIntervalMs: number;
  snapshotIntervalMs: number;
  heartbeatIntervalMs: number;
  suspectMs: number;
  /** How often each agent is probed: the agents are read for probes a few times as often. */
  probeIntervalMs: number;
  /** How long a flapping agent is held SUSPECT (for the log line). */
  flapHoldMs: number;
}

/** The duties one pass runs, in order. */
export interface Duties {
  lock: LeaseLock;
  /** Records this pass on Redis time; returns when the last pass of any instance ran. */
  passMark: () => Promise<PassMark>;
  leases: LeaseSweeper;
  inflight: InflightSweeper;
  ejector: Ejector;
  /** Turns agents DEGRADED from their outcomes and brings them back. */
  health: HealthSweep;
  due: DueProcessor;
  /** Fires the schedules whose tick has come (before `due`, which sends what they fired). */
  schedules?: ScheduleFirer;
  prober: Prober;
  /** Flags dependencies down on several agents at once, from the probes' answers. */
  dependencies?: DependencyWatch;
  janitor: ConsumerJanitor;
  /** Trims the task search index, as often as the janitor runs. */
  index?: IndexTrimmer;
  pools: PoolDrainer;
  snapshots: SnapshotWriter;
  registry: AgentRegistry;
}

type State = 'idle' | 'running' | 'closed';

/** Passes an instance completed as the leader, by kind (`reach_housekeeping_passes_total`). */
export interface HousekeepingPasses {
  /** Passes that ran every duty. */
  full: number;
  /**
   * Passes right after housekeeping could not run for a while: leases got that time back and
   * in-flight tasks were left for a later pass.
   */
  grace: number;
}

// One counter for the process, as the process guard's: every registry-sync registry shows it.
const passesTotal = new Counter({
  name: 'reach_housekeeping_passes_total',
  help: 'Housekeeping passes this process completed as the leader: full (every duty ran) or grace (right after a stall: leases got the time back, in-flight tasks waited for the next pass)',
  labelNames: ['kind'] as const,
  registers: [],
});
passesTotal.inc({ kind: 'full' }, 0);
passesTotal.inc({ kind: 'grace' }, 0);
const passSeconds = new Histogram({
  name: 'reach_housekeeping_pass_seconds',
  help: "How long the leader's housekeeping passes took, seconds",
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [],
});
const passMaxSeconds = new Gauge({
  name: 'reach_housekeeping_pass_max_seconds',
  help: 'The longest housekeeping pass this process ran as the leader since it started, seconds',
  registers: [],
});

/** Adds the housekeeping passes' counters and timings to a service registry. */
export function registerHousekeepingMetrics(registry: Registry): void {
  registry.registerMetric(passesTotal);
  registry.registerMetric(passSeconds);
  registry.registerMetric(passMaxSeconds);
}

/** Old consumers are few and harmless for a while: look for them twice a minute. */
const JANITOR_INTERVAL_MS = 30_000;
/** The least time between two due-only passes, so a busy due set cannot spin the leader. */
const DUE_PASS_MIN_GAP_MS = 20;
/** How often the leader looks at the due set's head between passes. */
const DUE_LOOK_MS = 100;

/** What a housekeeper needs. */
export interface HousekeeperOptions {
  duties: Duties;
  settings: HousekeeperSettings;
  logger: Logger;
  /** @default () => {} */
  onTransition?: (t: Transition) => void;
}

/**
 * Runs the duties that must happen once across registry-sync instances while holding the lease
 * lock: lease transitions, taking back tasks that will not finish where they are, ejecting slow
 * outliers, turning failing agents DEGRADED and back, firing due schedules, dispatching due retries and
 * delayed tasks, probing agents, and the periodic snapshot. A pass that
 * changes an agent's status publishes it at once instead of leaving routers to learn of it from
 * the periodic snapshot, which stays as the floor: a lease transition as a delta of the agents it
 * changed (`SnapshotWriter.changed`), the sweeps that count their changes as a snapshot
 * (`SnapshotWriter.soon`, coalesced over 50 ms). When a pass finds
 * that it could not run for a while (Redis paused or unreachable), leases get that time back for
 * a moment, so a store outage does not mark the whole fleet OFFLINE.
 *
 * Between two passes the leader also looks at the due set's head every 100 ms and wakes when its
 * earliest entry comes due (a delayed task, a retry's backoff), sending only what is due, so such
 * a task is late by about 100 ms at most rather than by up to a whole sweep interval.
 */
export class Housekeeper {
  readonly duties: Duties;
  private readonly onTransition: (t: Transition) => void;
  private state: State = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private dueTimer: NodeJS.Timeout | undefined;
  private leader = false;
  private nextPassAt = 0;
  private lastSnapshotAt = 0;
  private lastListAt = 0;
  /** How often a pass reads every agent for probes and dependency checks (see `tick`). */
  private readonly listEveryMs: number;
  private lastJanitorAt = 0;
  private lastPassAt = 0;
  private worstPassS = 0;
  private graceMs = 0;
  private graceUntil = 0;
  private running: Promise<void> = Promise.resolve();
  private readonly completed: HousekeepingPasses = { full: 0, grace: 0 };

  constructor(private readonly o: HousekeeperOptions) {
    this.duties = o.duties;
    const { sweepIntervalMs, snapshotIntervalMs, probeIntervalMs } = o.settings;
    // Probes go out within a quarter of their interval of being due.
    this.listEveryMs = Math.max(sweepIntervalMs, Math.min(snapshotIntervalMs, probeIntervalMs / 4));
    this.onTransition = o.onTransition ?? (() => {});
  }

  /** Starts the timer. */
  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'running';
    this.schedule(0);
  }

  /**
   * Writes a snapshot now, e.g. after a registration, so routers learn of it before the agent
   * gets its reply. A failure is logged, not thrown: the periodic snapshot follows anyway.
   */
  async writeSnapshotNow(): Promise<void> {
    if (this.state === 'closed') return;
    try {
      await this.duties.snapshots.write();
    } catch (err: unknown) {
      this.o.logger.warn({ err }, 'snapshot write failed');
    }
  }

  /**
   * Publishes these agents as they are now in a registry delta, e.g. after a registration, so
   * routers learn of it before the agent gets its reply. Never throws (`SnapshotWriter.changed`).
   */
  async publishChanges(agentIds: readonly string[]): Promise<void> {
    if (this.state === 'closed') return;
    await this.duties.snapshots.changed(agentIds);
  }

  /**
   * Passes completed as the leader so far; a pass that failed midway is not counted. Tests wait
   * on it to know a sweep has run since a moment, instead of sleeping.
   */
  get passes(): Readonly<HousekeepingPasses> {
    return this.completed;
  }

  /** Runs one pass at once (tests); normally the timer does. */
  async runOnce(): Promise<void> {
    await this.tick();
  }

  /** Stops the timer, waits for a running pass and releases the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) clearTimeout(this.timer);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    await this.running;
    await this.duties.snapshots.close();
    await this.duties.lock.release().catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.state !== 'running') return;
    this.timer = setTimeout(() => {
      this.running = this.running
        .then(() => this.tick())
        .finally(() => {
          this.schedule(this.o.settings.sweepIntervalMs);
          this.nextPassAt = Date.now() + this.o.settings.sweepIntervalMs;
          this.armDueTimer();
        });
    }, delayMs);
  }

  /**
   * While this instance leads, looks at the due set's head again in `delayMs` (unless the next
   * pass comes first): entries written meanwhile (a router's delayed task) are seen within
   * DUE_LOOK_MS.
   */
  private armDueTimer(delayMs = DUE_LOOK_MS): void {
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    if (this.state !== 'running' || !this.leader) return;
    const wait = Math.max(DUE_PASS_MIN_GAP_MS, delayMs);
    if (Date.now() + wait >= this.nextPassAt - DUE_PASS_MIN_GAP_MS) return;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = undefined;
      this.running = this.running.then(() => this.dueLook());
    }, wait);
  }

  /**
   * Sends what is due between two passes (one `ZRANGE` per shard when nothing is), then waits
   * for the head's time or DUE_LOOK_MS, whichever is sooner. A failure is logged; the next pass
   * sends what is due anyway.
   */
  private async dueLook(): Promise<void> {
    if (this.state !== 'running' || !this.leader) return;
    let next = DUE_LOOK_MS;
    try {
      let at = await this.duties.due.nextDueAt();
      if (at !== undefined && at <= Date.now()) {
        await this.duties.due.process(Date.now());
        at = await this.duties.due.nextDueAt();
      }
      if (at !== undefined) next = Math.min(next, at - Date.now());
    } catch (err: unknown) {
      this.o.logger.warn({ err }, 'due pass failed');
    }
    this.armDueTimer(next);
  }

  private noteGap(now: number, mark: PassMark): number {
    // Only a gap long enough to make fresh agents look SUSPECT is the store's fault; a pass that
    // is merely late on a busy machine must not pause liveness checks.
    const { sweepIntervalMs } = this.o.settings;
    const bound = Math.max(
      this.o.settings.heartbeatIntervalMs,
      3 * sweepIntervalMs,
      this.o.settings.suspectMs - this.o.settings.heartbeatIntervalMs,
    );
    const own = this.lastPassAt > 0 ? now - this.lastPassAt - sweepIntervalMs : 0;
    // On Redis time since the last pass of any instance: a leader that just started, or took
    // over, sees how long the whole control plane was away, when heartbeats could not land.
    const shared = mark.previousMs > 0 ? mark.nowMs - mark.previousMs - sweepIntervalMs : 0;
    const gap = Math.max(own, shared);
    if (gap > bound) {
      this.graceMs = gap + this.o.settings.heartbeatIntervalMs;
      // Long enough for every agent's next heartbeat to land, even on a loaded machine.
      this.graceUntil =
        now + Math.max(2 * this.o.settings.heartbeatIntervalMs, this.o.settings.suspectMs);
      this.o.logger.warn(
        { gap_ms: gap },
        'housekeeping could not run for a while; leases get the time back',
      );
    }
    this.lastPassAt = now;
    return now < this.graceUntil ? this.graceMs : 0;
  }

  private async tick(): Promise<void> {
    const d = this.duties;
    try {
      this.leader = false;
      this.leader = await d.lock.hold();
      if (!this.leader) {
        this.lastPassAt = 0;
        return;
      }
      const now = Date.now();
      const grace = this.noteGap(now, await d.passMark());
      const transitions = await d.leases.sweep(grace);
      for (const t of transitions) {
        this.o.logger.info(
          { agent_id: t.agent_id, from: t.from, to: t.to, lease_age_ms: t.lease_age_ms },
          'agent status changed',
        );
        if (t.damped)
          this.o.logger.warn(
            { agent_id: t.agent_id, hold_ms: this.o.settings.flapHoldMs },
            'agent lease keeps lapsing; held SUSPECT though heartbeats come back (flap damping)',
          );
        this.onTransition(t);
      }
      // Routers hear of it while the rest of the pass runs (the delta is written beside it):
      // reclaiming an OFFLINE agent's tasks can take a while, and no new task should go to it
      // meanwhile.
      if (transitions.length > 0) void d.snapshots.changed(transitions.map((t) => t.agent_id));
      if (grace === 0 && (await d.inflight.sweep(now)).suspected > 0) d.snapshots.soon();
      const ejected = await d.ejector.sweep(now);
      if (ejected.length > 0) d.snapshots.soon();
      if ((await d.health.sweep(now)) > 0) d.snapshots.soon();
      if (d.schedules) await d.schedules.fire(now);
      await d.due.process(now);
      await d.pools.sweep();
      // Every agent's record and slots are read for probes, dependency checks and the snapshot:
      // at thousands of agents the largest cost of a pass, so only as often as those need it.
      const snapshotDue = now - this.lastSnapshotAt >= this.o.settings.snapshotIntervalMs;
      if (snapshotDue || now - this.lastListAt >= this.listEveryMs) {
        this.lastListAt = now;
        // Deltas written after this mark are read again before the views go out as a snapshot.
        let mark = d.snapshots.mark();
        let views = await d.registry.list();
        await d.prober.probe(views, now);
        if (d.dependencies && (await d.dependencies.check(views)) > 0) {
          // The agents it marked must not go out unmarked in this pass's snapshot.
          mark = d.snapshots.mark();
          views = await d.registry.list();
          d.snapshots.soon();
        }
        if (snapshotDue) {
          await d.snapshots.write(views, mark);
          this.lastSnapshotAt = now;
        }
      }
      if (now - this.lastJanitorAt >= JANITOR_INTERVAL_MS) {
        this.lastJanitorAt = now;
        await d.janitor.sweep();
        await d.index?.sweep(now);
      }
      const kind = grace === 0 ? 'full' : 'grace';
      this.completed[kind]++;
      passesTotal.inc({ kind });
      const seconds = (Date.now() - now) / 1000;
      passSeconds.observe(seconds);
      if (seconds > this.worstPassS) passMaxSeconds.set((this.worstPassS = seconds));
    } catch (err: unknown) {
      this.o.logger.warn({ err }, 'housekeeping pass failed');
    }
  }
}
