import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  encodeSettings,
  PUBLISHED_SETTINGS,
  type FullAgentView,
  type PublishedSettingName,
  type PublishedSettings,
  type ReachKeys,
} from '@agent-reach/protocol';
import { deltaScript } from '../commands/delta.ts';
import { snapshotScript } from '../commands/snapshot.ts';
import type { AgentRegistry } from '../registry/agent-registry.ts';
import { snapshotAgent } from './snapshot-agent.ts';

/** Changes that arrive within this long of each other are published in one full snapshot. */
export const SNAPSHOT_COALESCE_MS = 50;
/**
 * The least time between two deltas of one process: changes meanwhile share the next delta, so
 * any churn makes at most 1000 / DELTA_MIN_GAP_MS deltas a second per registry-sync.
 */
export const DELTA_MIN_GAP_MS = 20;
/** Deltas the stream keeps (about): minutes of churn, far more than a router lags by. */
export const DELTAS_KEPT = 2000;
/** Deltas remembered here so a full snapshot read before one can take its agents again. */
const RECENT_DELTAS = 512;

const writesTotal = new Counter({
  name: 'reach_snapshot_writes_total',
  help: 'Registry writes this process made: full snapshots and deltas (the changed agents only)',
  labelNames: ['kind'] as const,
  registers: [],
});
const bytesTotal = new Counter({
  name: 'reach_snapshot_bytes_total',
  help: 'Bytes of agents written in registry snapshots and deltas (JSON), by kind',
  labelNames: ['kind'] as const,
  registers: [],
});
for (const kind of ['full', 'delta']) {
  writesTotal.inc({ kind }, 0);
  bytesTotal.inc({ kind }, 0);
}

/** Adds `reach_snapshot_writes_total` and `reach_snapshot_bytes_total` to a service registry. */
export function registerSnapshotMetrics(registry: Registry): void {
  registry.registerMetric(writesTotal);
  registry.registerMetric(bytesTotal);
}

/** What the snapshot writer needs. */
export interface SnapshotWriterOptions {
  redis: RedisClient;
  keys: ReachKeys;
  registry: AgentRegistry;
  /** The settings this instance runs with; those in `PUBLISHED_SETTINGS` are published. */
  settings: PublishedSettings & { instanceId: string };
  logger: Logger;
  /** How long `soon()` gathers changes before one write. @default SNAPSHOT_COALESCE_MS */
  coalesceMs?: number;
  /** The least time between two deltas. @default DELTA_MIN_GAP_MS */
  deltaGapMs?: number;
}

/**
 * Writes the registry routers read: a full snapshot (`keys.snapshot()`) every interval and when
 * asked, and between them deltas of the agents that changed (`keys.snapshotDeltas()`), all on one
 * version counter (docs/PROTOCOL.md §8). A status change costs a delta of that agent, not a
 * rewrite of the fleet. Beside the snapshot it writes the settings routers share with
 * registry-sync (`keys.settings()`), so a router that reloads the snapshot finds them too.
 *
 * Writes of this process run one at a time, in order: a full snapshot built from agents read
 * before a delta was written takes that delta's agents again, so it never publishes them older.
 */
export class SnapshotWriter {
  private readonly published: PublishedSettings;
  private readonly log: Logger;
  private readonly coalesceMs: number;
  private readonly deltaGapMs: number;
  private timer: NodeJS.Timeout | undefined;
  /** The writes of this process, one after another. */
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  /** Agents changed and not yet in a delta, and who waits for that delta. */
  private pending = new Set<string>();
  private waiters: (() => void)[] = [];
  private deltaQueued = false;
  private lastDeltaAt = 0;
  /** Deltas written so far, and the agents of the last RECENT_DELTAS of them. */
  private deltaSeq = 0;
  private recent: { seq: number; ids: readonly string[] }[] = [];

  constructor(private readonly o: SnapshotWriterOptions) {
    const out = {} as PublishedSettings;
    for (const name of Object.keys(PUBLISHED_SETTINGS) as PublishedSettingName[])
      out[name] = o.settings[name];
    this.published = out;
    this.log = o.logger.child({ module: 'snapshot-writer' });
    this.coalesceMs = o.coalesceMs ?? SNAPSHOT_COALESCE_MS;
    this.deltaGapMs = o.deltaGapMs ?? DELTA_MIN_GAP_MS;
  }

  /** Writes the published settings (at start-up; every snapshot writes them again). */
  async publishSettings(): Promise<void> {
    await this.o.redis.hset(
      this.o.keys.settings(),
      encodeSettings(this.published, this.o.settings.instanceId, Date.now()),
    );
  }

  /**
   * Where the deltas stand: taken before reading the agents a full snapshot is built from
   * (`write(views, mark)`), so the agents of deltas written meanwhile are read again.
   */
  mark(): number {
    return this.deltaSeq;
  }

  /**
   * Writes a full snapshot of every agent (or of the views given, read after `mark`); returns
   * its version. Waits for the writes before it.
   */
  write(given?: readonly FullAgentView[], mark?: number): Promise<number> {
    const run = this.chain.then(() => this.writeFull(given, mark));
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Publishes a delta carrying these agents as they are now (or their removal, when gone), and
   * resolves once it is written: the agents of one registration, heartbeat or sweep. Changes of
   * many callers within DELTA_MIN_GAP_MS share one delta. A failed write is logged and a full
   * snapshot follows at once; the promise resolves either way.
   */
  changed(agentIds: Iterable<string>): Promise<void> {
    if (this.closed) return Promise.resolve();
    for (const id of agentIds) this.pending.add(id);
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    if (!this.deltaQueued) {
      this.deltaQueued = true;
      this.chain = this.chain.then(() => this.flushDelta());
    }
    return done;
  }

  /**
   * Writes a full snapshot within `coalesceMs` (50 ms), for changes whose agents the caller does
   * not know one by one. The changes of one burst share one write. A failure is logged, not
   * thrown: the periodic snapshot follows anyway.
   */
  soon(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      // Cleared before the write starts: a change during the write gets a write of its own.
      this.timer = undefined;
      this.write().catch((err: unknown) =>
        this.log.warn({ err }, 'snapshot write after a status change failed'),
      );
    }, this.coalesceMs);
  }

  /** Drops a full write not yet started, writes the last delta and waits for both. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
  }

  private async writeFull(given: readonly FullAgentView[] | undefined, mark?: number) {
    let views = given ?? (await this.o.registry.list());
    if (given && mark !== undefined && mark < this.deltaSeq)
      views = await this.refresh(views, mark);
    const agents = JSON.stringify(views.map(snapshotAgent));
    // Sent before the snapshot on the same connection: a router that reloads on the snapshot's
    // notification reads these settings already written (a lost key comes back this way too).
    const settings = this.publishSettings();
    const { version } = await snapshotScript.run(this.o.redis, {
      keys: {
        snapshot: this.o.keys.snapshot(),
        version: this.o.keys.snapshotVersion(),
        deltas: this.o.keys.snapshotDeltas(),
      },
      args: { agents, channel: this.o.keys.snapshotChannel() },
    });
    await settings;
    writesTotal.inc({ kind: 'full' });
    bytesTotal.inc({ kind: 'full' }, Buffer.byteLength(agents));
    return version;
  }

  /** `views` with the agents of deltas written after `mark` read again (or dropped, when gone). */
  private async refresh(views: readonly FullAgentView[], mark: number) {
    const since = new Set<string>();
    for (const d of this.recent) if (d.seq > mark) for (const id of d.ids) since.add(id);
    // A mark older than what is remembered: every agent is read again.
    if ((this.recent[0]?.seq ?? Infinity) > mark + 1) return this.o.registry.list();
    const fresh = new Map((await this.o.registry.views([...since])).map((v) => [v.agent_id, v]));
    const out = views.filter((v) => !since.has(v.agent_id) || fresh.has(v.agent_id));
    const listed = new Set(out.map((v) => v.agent_id));
    const merged = out.map((v) => fresh.get(v.agent_id) ?? v);
    for (const [id, v] of fresh) if (!listed.has(id)) merged.push(v);
    return merged;
  }

  private async flushDelta(): Promise<void> {
    const wait = this.lastDeltaAt + this.deltaGapMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // Changes from here on go to the next delta.
    this.deltaQueued = false;
    const ids = [...this.pending];
    const waiters = this.waiters;
    this.pending = new Set();
    this.waiters = [];
    try {
      if (ids.length > 0) await this.writeDelta(ids);
    } catch (err: unknown) {
      this.log.warn({ err, agents: ids.length }, 'registry delta not written; writing a snapshot');
      this.soon();
    } finally {
      this.lastDeltaAt = Date.now();
      for (const resolve of waiters) resolve();
    }
  }

  private async writeDelta(ids: string[]): Promise<void> {
    const views = await this.o.registry.views(ids);
    const present = new Set(views.map((v) => v.agent_id));
    const removed = ids.filter((id) => !present.has(id));
    const agents = JSON.stringify(views.map(snapshotAgent));
    await deltaScript.run(this.o.redis, {
      keys: { version: this.o.keys.snapshotVersion(), deltas: this.o.keys.snapshotDeltas() },
      args: {
        agents,
        removed: JSON.stringify(removed),
        channel: this.o.keys.snapshotChannel(),
        maxlen: DELTAS_KEPT,
      },
    });
    this.deltaSeq++;
    this.recent.push({ seq: this.deltaSeq, ids });
    if (this.recent.length > RECENT_DELTAS) this.recent.shift();
    writesTotal.inc({ kind: 'delta' });
    bytesTotal.inc({ kind: 'delta' }, Buffer.byteLength(agents));
  }
}
