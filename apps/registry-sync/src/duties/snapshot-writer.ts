import type { RedisClient } from '@agent-reach/service-kit/redis';
import { snapshotScript } from '../commands/snapshot.ts';
import type { Logger } from 'pino';
import {
  DEFAULT_TENANT,
  HEALTH_ROUTING_MIN_OUTCOMES,
  encodeSettings,
  PUBLISHED_SETTINGS,
  type FullAgentView,
  type PublishedSettingName,
  type PublishedSettings,
  type ReachKeys,
  type SnapshotAgent,
} from '@agent-reach/protocol';
import type { AgentRegistry } from '../registry/agent-registry.ts';

/** Changes that arrive within this long of each other are published in one snapshot. */
export const SNAPSHOT_COALESCE_MS = 50;

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
}

/**
 * Writes the versioned registry snapshot routers read, and beside it the settings routers share
 * with registry-sync (`keys.settings()`), so a router that reloads the snapshot finds them too.
 */
export class SnapshotWriter {
  private readonly published: PublishedSettings;
  private readonly log: Logger;
  private readonly coalesceMs: number;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: SnapshotWriterOptions) {
    const out = {} as PublishedSettings;
    for (const name of Object.keys(PUBLISHED_SETTINGS) as PublishedSettingName[])
      out[name] = o.settings[name];
    this.published = out;
    this.log = o.logger.child({ module: 'snapshot-writer' });
    this.coalesceMs = o.coalesceMs ?? SNAPSHOT_COALESCE_MS;
  }

  /** Writes the published settings (at start-up; every snapshot writes them again). */
  async publishSettings(): Promise<void> {
    await this.o.redis.hset(
      this.o.keys.settings(),
      encodeSettings(this.published, this.o.settings.instanceId, Date.now()),
    );
  }

  /** Reads every agent (or uses the views given) and writes a new snapshot; returns its version. */
  async write(given?: readonly FullAgentView[]): Promise<number> {
    const views = given ?? (await this.o.registry.list());
    const agents: SnapshotAgent[] = views.map((v) => ({
      agent_id: v.agent_id,
      instance_id: v.instance_id,
      epoch: v.epoch,
      status: v.status,
      capabilities: v.capabilities,
      max_concurrency: v.max_concurrency,
      inflight: v.inflight,
      region: v.region,
      channel: v.channel,
      lease_age_ms: v.lease_age_ms,
      ...(v.ejected_until > 0 ? { ejected_until: v.ejected_until } : {}),
      ...(v.tags.length > 0 ? { tags: v.tags } : {}),
      // The score steers routing only once the window holds enough outcomes to be a rate,
      // whatever lowered it (its outcomes or its runtime figures).
      ...(v.health_score < 100 && (v.health_samples ?? 0) >= HEALTH_ROUTING_MIN_OUTCOMES
        ? { health_score: v.health_score }
        : {}),
      ...(v.observe ? { observe: true } : {}),
      ...(v.unreachable ? { unreachable: true } : {}),
      ...(v.dependency_down ? { dependency_down: v.dependency_down } : {}),
      ...(v.priority ? { priority: v.priority } : {}),
      ...(v.weight !== 1 ? { weight: v.weight } : {}),
      ...(Object.keys(v.ewma_ms).length > 0 ? { ewma_ms: v.ewma_ms } : {}),
      ...(v.runtime ? { runtime: v.runtime } : {}),
      ...(v.tenant !== DEFAULT_TENANT ? { tenant: v.tenant } : {}),
      ...(v.shared ? { shared: true } : {}),
    }));
    // Sent before the snapshot on the same connection: a router that reloads on the snapshot's
    // notification reads these settings already written (a lost key comes back this way too).
    const settings = this.publishSettings();
    const { version } = await snapshotScript.run(this.o.redis, {
      keys: { snapshot: this.o.keys.snapshot(), version: this.o.keys.snapshotVersion() },
      args: { agents: JSON.stringify(agents), channel: this.o.keys.snapshotChannel() },
    });
    await settings;
    return version;
  }

  /**
   * Writes a snapshot within `coalesceMs` (50 ms): after a status change, so routers learn of it
   * at once instead of at the next periodic snapshot. The changes of one burst share one write.
   * A failure is logged, not thrown: the periodic snapshot follows anyway.
   */
  soon(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      // Cleared before the write starts: a change during the write gets a write of its own.
      this.timer = undefined;
      this.writing = this.writing.then(() =>
        this.write().then(
          () => undefined,
          (err: unknown) => this.log.warn({ err }, 'snapshot write after a status change failed'),
        ),
      );
    }, this.coalesceMs);
  }

  /** Drops a write not yet started and waits for one under way. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
  }
}
