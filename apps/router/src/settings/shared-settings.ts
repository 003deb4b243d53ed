import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  decodeSettings,
  FOLLOWED_SETTINGS,
  PUBLISHED_SETTINGS,
  type FollowedSettingName,
  type PublishedSettings,
  type ReachKeys,
} from '@agent-reach/protocol';

/**
 * The settings the router shares with registry-sync and takes from it once published (the rows
 * of `SHARED_SETTINGS` marked `published: 'followed'`): the lease bound the delivery re-checks,
 * the dispatch grace registry-sync re-drives after, the watermark retries route with, the
 * retention of dead letters and callback topics both write, and the shard count of the due set
 * both write to.
 */
export const ROUTER_SHARED_SETTINGS = FOLLOWED_SETTINGS;

/** A setting the router takes from registry-sync. */
export type RouterSharedName = FollowedSettingName;

/** The values of the settings the router takes from registry-sync. */
export type RouterSharedValues = Pick<PublishedSettings, RouterSharedName>;

/** What {@link SharedSettings} needs. */
export interface SharedSettingsOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** The router's own values (its compiled options): in force until registry-sync publishes. */
  own: RouterSharedValues;
  /**
   * The settings the router was given rather than defaulted (`optionsFromEnv()` holds only the
   * variables that are set): a published value that differs from one of them is warned about.
   */
  given: Partial<RouterSharedValues>;
  logger: Logger;
}

type Source = 'own' | 'published';

/**
 * Holds the settings the router shares with registry-sync, which owns them and publishes them
 * under `keys.settings()`. Until they are published the router's own values hold; from then on
 * registry-sync's do, and a router given a different value (e.g. `REACH_OFFLINE_MS` set in its
 * environment) says so in a warning naming both. Read the getters at each use: a value changes
 * when registry-sync publishes another (it restarted with new settings, or first started after
 * this router).
 */
export class SharedSettings {
  private values: RouterSharedValues;
  private source: Source = 'own';
  /** `name=value` pairs already warned about, so a conflict is logged once, not every reload. */
  private readonly warned = new Set<string>();
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly o: SharedSettingsOptions) {
    this.values = pick(o.own);
    this.log = o.logger.child({ module: 'settings' });
  }

  /** Lease age past which an agent gets no task (`REACH_OFFLINE_MS`). */
  get offlineMs(): number {
    return this.values.offlineMs;
  }

  /** Lease age past which no task is delivered, whatever the status (`REACH_DELIVERY_LEASE_MS`). */
  get deliveryLeaseMs(): number {
    return this.values.deliveryLeaseMs;
  }

  /** How long a claimed task may stay undelivered before registry-sync re-drives it. */
  get dispatchGraceMs(): number {
    return this.values.dispatchGraceMs;
  }

  /** Share of max_concurrency at or above which an agent is skipped while another has room. */
  get watermark(): number {
    return this.values.watermark;
  }

  /** How long dead letters are kept, seconds. */
  get dlqRetentionS(): number {
    return this.values.dlqRetentionS;
  }

  /** How long an idle callback topic is kept, seconds. */
  get callbackRetentionS(): number {
    return this.values.callbackRetentionS;
  }

  /** Approximate cap on entries per callback topic. */
  get callbackMaxLen(): number {
    return this.values.callbackMaxLen;
  }

  /** Shards of the acks stream and the due set (`REACH_SHARDS`). */
  get shards(): number {
    return this.values.shards;
  }

  /** Task shards (`REACH_TASK_SHARDS`). */
  get taskShards(): number {
    return this.values.taskShards;
  }

  /** `published` once registry-sync's values are in force, `own` before. */
  get from(): Source {
    return this.source;
  }

  /**
   * `options` with each shared setting it has read from here at each access: for collaborators
   * that take an options object and read it per call.
   */
  over<T extends Partial<RouterSharedValues>>(options: T): T {
    const view = { ...options };
    for (const name of ROUTER_SHARED_SETTINGS) {
      if (!(name in view)) continue;
      Object.defineProperty(view, name, { get: () => this.values[name], enumerable: true });
    }
    return view;
  }

  /**
   * Reads the published settings, then re-reads them whenever a snapshot is announced on
   * `subscriber` (registry-sync writes them with every snapshot) and every `intervalMs`.
   */
  async start(subscriber: RedisClient, intervalMs: number): Promise<void> {
    await this.refresh();
    if (this.source === 'own') {
      this.log.info(
        'registry-sync has not published its settings yet; using this router’s own until it does',
      );
    }
    const channel = this.o.keys.snapshotChannel();
    subscriber.on('message', (from: string) => {
      if (from === channel) void this.refresh();
    });
    await subscriber.subscribe(channel);
    this.timer = setInterval(() => void this.refresh(), intervalMs);
    this.timer.unref();
  }

  /**
   * Reads the published settings now and takes them. Calls during a read coalesce into one more
   * read after it. A failed read keeps the values in force.
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        try {
          this.apply(decodeSettings(await this.o.redis.hgetall(this.o.keys.settings())));
        } catch (err: unknown) {
          this.log.warn({ err }, 'reading registry-sync’s settings failed; keeping these');
        }
      } while (this.again && !this.closed);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Stops following. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }

  private apply(published: Partial<PublishedSettings> | undefined): void {
    if (!published) return;
    const next = { ...this.values };
    for (const name of ROUTER_SHARED_SETTINGS) {
      const value = published[name];
      // Zero is never a usable value for any of these: keep ours rather than stop routing.
      if (value === undefined || !(value > 0)) continue;
      const given = this.o.given[name];
      const env = PUBLISHED_SETTINGS[name];
      if (given !== undefined && given !== value && !this.warned.has(`${name}=${value}`)) {
        this.warned.add(`${name}=${value}`);
        this.log.warn(
          { setting: env, given, published: value },
          `${env} is ${given} for this router but registry-sync runs with ${value}; using ${value}. Set it on registry-sync (or leave it unset here)`,
        );
      } else if (this.source === 'published' && this.values[name] !== value) {
        this.log.info(
          { setting: env, from: this.values[name], to: value },
          `registry-sync now runs with ${env}=${value}`,
        );
      }
      next[name] = value;
    }
    this.values = next;
    this.source = 'published';
  }
}

function pick(values: RouterSharedValues): RouterSharedValues {
  const out = {} as RouterSharedValues;
  for (const name of ROUTER_SHARED_SETTINGS) out[name] = values[name];
  return out;
}
