import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';
import { slowScript } from '../commands/slow.ts';
import { ownValue } from '../capability-settings.ts';

/** When a completion counts as slow. */
export interface SpeedSettings {
  /** Execution time past which a completion is slow, ms (REACH_SLOW_MS). */
  slowMs: number;
  /** The same, per capability; a capability not named here takes `slowMs`. */
  slowMsByCapability: Record<string, number>;
}

/** What the speed tracker works with. */
export interface SpeedTrackerOptions {
  /** A connection where slow-1.lua is loaded (`slowScript`). */
  redis: RedisClient;
  keys: ReachKeys;
  settings: SpeedSettings;
}

/** Weight of the newest sample in the execution-time EWMA routers read. */
export const EWMA_ALPHA = 0.2;

/**
 * Agents' execution speed per capability: the EWMA routers read and the slow streak. Most
 * completions have theirs recorded inside the agent step (ack-agent-3.lua, given `slowMsFor` and
 * EWMA_ALPHA); `track` is the step on its own, for a completion that did not name its capability.
 */
export class SpeedTracker {
  constructor(private readonly o: SpeedTrackerOptions) {}

  /** The execution time past which a completion of `capability` is slow, ms. */
  slowMsFor(capability: string): number {
    return ownValue(this.o.settings.slowMsByCapability, capability) ?? this.o.settings.slowMs;
  }

  /** Whether a completion of `capability` that ran `durationMs` was slow (unknown: not slow). */
  isSlow(capability: string, durationMs: number | undefined): boolean {
    return durationMs !== undefined && durationMs > this.slowMsFor(capability);
  }

  /** Records one completion's execution time, once the task step named its capability. */
  async track(agentId: string, capability: string, durationMs: number | undefined): Promise<void> {
    if (durationMs === undefined) return;
    await slowScript.run(this.o.redis, {
      keys: { agent: this.o.keys.agent(agentId) },
      args: {
        durationMs,
        slowMs: this.slowMsFor(capability),
        capability,
        ewmaWeight: EWMA_ALPHA,
      },
    });
  }
}
