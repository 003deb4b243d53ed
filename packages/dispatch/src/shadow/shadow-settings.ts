import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  checkShadowSettings,
  decodeShadowSettings,
  type ReachKeys,
  type ShadowSettings,
} from '@agent-reach/protocol';

/** How often a process re-reads the capabilities' shadow settings. */
export const SHADOW_SETTINGS_REFRESH_MS = 2000;

/** What {@link ShadowSettingsStore} needs. */
export interface ShadowSettingsOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** The rate of a capability without settings of its own (`REACH_SHADOW_RATE`). */
  defaultRate: number;
  logger: Logger;
}

/**
 * The capabilities' shadow settings (docs/PROTOCOL.md §7): written by the operator API into one
 * hash (`keys.shadowSettings()`), held here and re-read every two seconds, so mirroring a task
 * costs no Redis read. A capability without settings mirrors at `REACH_SHADOW_RATE` (0 unless set),
 * compared whole.
 */
export class ShadowSettingsStore {
  #byCapability = new Map<string, ShadowSettings>();
  #timer: NodeJS.Timeout | undefined;
  readonly #log: Logger;

  constructor(private readonly o: ShadowSettingsOptions) {
    this.#log = o.logger.child({ module: 'shadow-settings' });
  }

  /** The settings in force for `capability`. */
  for(capability: string): ShadowSettings {
    return this.#byCapability.get(capability) ?? { rate: this.o.defaultRate };
  }

  /** Whether any capability may mirror at all (a cheap check before looking for observers). */
  get anyOn(): boolean {
    if (this.o.defaultRate > 0) return true;
    for (const s of this.#byCapability.values()) if (s.rate > 0) return true;
    return false;
  }

  /** Reads the settings now and every two seconds from now on. */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh(), SHADOW_SETTINGS_REFRESH_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Re-reads the hash; a failed read keeps the settings held. */
  async refresh(): Promise<void> {
    try {
      const raw = await this.o.redis.hgetall(this.o.keys.shadowSettings());
      const next = new Map<string, ShadowSettings>();
      for (const [capability, text] of Object.entries(raw)) {
        const s = decodeShadowSettings(text);
        if (s) next.set(capability, s);
      }
      this.#byCapability = next;
    } catch (err: unknown) {
      this.#log.debug({ err }, 'shadow settings not read; the ones held stay');
    }
  }

  /** Writes a capability's settings (the operator API); they hold here at once. */
  async put(capability: string, input: unknown): Promise<ShadowSettings | { error: string }> {
    const checked = checkShadowSettings(input);
    if (!checked.ok) return { error: checked.error };
    await this.o.redis.hset(
      this.o.keys.shadowSettings(),
      capability,
      JSON.stringify(checked.value),
    );
    this.#byCapability.set(capability, checked.value);
    return checked.value;
  }

  /** Reads a capability's settings from Redis (the operator API), or the default. */
  async get(capability: string): Promise<ShadowSettings & { source: 'capability' | 'default' }> {
    const text = await this.o.redis.hget(this.o.keys.shadowSettings(), capability);
    const s = decodeShadowSettings(text);
    return s ? { ...s, source: 'capability' } : { rate: this.o.defaultRate, source: 'default' };
  }

  /** Drops a capability's own settings: the default holds again. */
  async remove(capability: string): Promise<void> {
    await this.o.redis.hdel(this.o.keys.shadowSettings(), capability);
    this.#byCapability.delete(capability);
  }
}
