import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import { leaseScript } from '../commands/lease.ts';
import type { AgentStatus, ReachKeys } from '@agent-reach/protocol';

/** A change of an agent's status found by a sweep. */
export interface Transition {
  agent_id: string;
  from: AgentStatus;
  to: AgentStatus | 'GONE';
  lease_age_ms: number;
  /** The lapse started a flap-damping hold: SUSPECT until it ends, heartbeats or not. */
  damped?: true;
}

/** Lease bounds the sweeper applies. */
export interface LeaseSettings {
  suspectMs: number;
  offlineMs: number;
  /** Lapses within `flapWindowMs` that start a hold of `flapHoldMs`. @default 0 (no damping) */
  flapLimit?: number;
  flapWindowMs?: number;
  flapHoldMs?: number;
}

/** What a lease sweeper needs. */
export interface LeaseSweeperOptions {
  redis: RedisClient;
  keys: ReachKeys;
  settings: LeaseSettings;
}

/**
 * Moves agents between lease states on Redis server time, holds flapping agents SUSPECT (flap
 * damping, lease-4.lua) and removes drained agents.
 */
export class LeaseSweeper {
  constructor(private readonly o: LeaseSweeperOptions) {}

  /** One pass over every agent; `graceMs` is added to every lease. Returns the transitions made. */
  async sweep(graceMs = 0): Promise<Transition[]> {
    const ids = await this.o.redis.smembers(this.o.keys.agents());
    if (ids.length === 0) return [];
    // One script per agent, each in its agent's slot: one pipeline per master on a Cluster.
    const pipeline = slotPipeline(this.o.redis);
    const args = {
      suspectMs: this.o.settings.suspectMs,
      offlineMs: this.o.settings.offlineMs,
      graceMs,
      flapLimit: this.o.settings.flapLimit ?? 0,
      flapWindowMs: this.o.settings.flapWindowMs ?? 120_000,
      flapHoldMs: this.o.settings.flapHoldMs ?? 60_000,
    };
    for (const id of ids) {
      const keys = {
        agent: this.o.keys.agent(id),
        pending: this.o.keys.pending(id),
        inbox: this.o.keys.inbox(id),
        card: this.o.keys.agentCard(id),
      };
      pipeline.add(keys.agent, (p) => leaseScript.queue(p, { keys, args }));
    }
    const replies = await pipeline.exec();
    const transitions: Transition[] = [];
    const gone: string[] = [];
    replies.forEach(([err, reply], i) => {
      const id = ids[i] as string;
      if (err || !reply) return;
      const { previous, status, leaseAgeMs, damped } = leaseScript.decode(reply, args);
      if (previous === 'NONE') gone.push(id);
      else if (previous !== status) {
        transitions.push({
          agent_id: id,
          from: previous,
          to: status as AgentStatus | 'GONE',
          lease_age_ms: leaseAgeMs,
          ...(damped ? { damped: true as const } : {}),
        });
        if (status === 'GONE') gone.push(id);
      }
    });
    if (gone.length > 0) await this.o.redis.srem(this.o.keys.agents(), ...gone);
    return transitions;
  }
}
