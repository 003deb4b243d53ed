import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { ReachKeys } from '@agent-reach/protocol';
import { ejectScript } from '../commands/eject.ts';
import type { FleetEventLog } from '@agent-reach/dispatch';

/** Outlier-detection settings. */
export interface EjectSettings {
  slowStreak: number;
  ejectS: number;
  ejectMaxShare: number;
}

interface Row {
  id: string;
  live: boolean;
  degraded: boolean;
  streak: number;
  ejectedUntil: number;
  capabilities: string[];
}

/** What an ejector needs. */
export interface EjectorOptions {
  redis: RedisClient;
  keys: ReachKeys;
  fleet: FleetEventLog;
  settings: EjectSettings;
  logger: Logger;
}

/**
 * Ejects agents after consecutive slow completions for a while, like Envoy's outlier detection,
 * but never more than a share of any capability's live agents at once (ejected and DEGRADED
 * together), so a slow dependency
 * that all agents share does not empty the pool.
 */
export class Ejector {
  private readonly log: Logger;

  constructor(private readonly o: EjectorOptions) {
    this.log = o.logger.child({ module: 'ejector' });
  }

  /** One pass; returns the agents ejected. */
  async sweep(now: number): Promise<string[]> {
    const rows = await this.load();
    const live = new Map<string, number>();
    const ejected = new Map<string, number>();
    for (const r of rows) {
      if (!r.live) continue;
      for (const c of r.capabilities) {
        live.set(c, (live.get(c) ?? 0) + 1);
        // DEGRADED agents are out too: the cap holds for both together.
        if (r.ejectedUntil > now || r.degraded) ejected.set(c, (ejected.get(c) ?? 0) + 1);
      }
    }
    const out: string[] = [];
    for (const r of rows) {
      if (!r.live || r.degraded || r.streak < this.o.settings.slowStreak || r.ejectedUntil > now)
        continue;
      const allowed = r.capabilities.every(
        (c) =>
          (ejected.get(c) ?? 0) + 1 <=
          Math.floor((live.get(c) ?? 0) * this.o.settings.ejectMaxShare),
      );
      if (!allowed) continue;
      const until = now + this.o.settings.ejectS * 1000;
      const done = await ejectScript.run(this.o.redis, {
        keys: { agent: this.o.keys.agent(r.id) },
        args: { until },
      });
      if (!done) continue;
      for (const c of r.capabilities) ejected.set(c, (ejected.get(c) ?? 0) + 1);
      out.push(r.id);
      this.log.warn(
        { agent_id: r.id, streak: r.streak, eject_s: this.o.settings.ejectS },
        'slow agent ejected',
      );
      this.o.fleet.append({
        kind: 'ejected',
        agent_id: r.id,
        reason: `${r.streak} slow completions in a row`,
      });
    }
    return out;
  }

  private async load(): Promise<Row[]> {
    const ids = await this.o.redis.smembers(this.o.keys.agents());
    if (ids.length === 0) return [];
    const pipeline = slotPipeline(this.o.redis);
    for (const id of ids)
      pipeline.add(this.o.keys.agent(id), (p) =>
        p.hmget(
          this.o.keys.agent(id),
          'status',
          'slow_streak',
          'ejected_until',
          'capabilities',
          'degraded',
        ),
      );
    const replies = await pipeline.exec();
    return ids.map((id, i) => {
      const [status, streak, until, caps, degraded] = (replies[i]?.[1] ?? []) as (string | null)[];
      let capabilities: string[];
      try {
        capabilities = JSON.parse(caps ?? '[]') as string[];
      } catch {
        capabilities = [];
      }
      return {
        id,
        live: status === 'HEALTHY' || status === 'SUSPECT' || status === 'DEGRADED',
        degraded: degraded === '1',
        streak: Number(streak ?? 0),
        ejectedUntil: Number(until ?? 0),
        capabilities,
      };
    });
  }
}
