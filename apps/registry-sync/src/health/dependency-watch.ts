import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { FleetEventLog } from '@agent-reach/dispatch';
import { failingDependencies, type FullAgentView, type ReachKeys } from '@agent-reach/protocol';
import { dependencyDownScript } from './commands/dependency-down.ts';

/** A dependency flagged down for a capability, as kept in `keys.dependenciesDown()`. */
export interface FlaggedDependency {
  dependency: string;
  capability: string;
  /** The agents of the capability whose latest answer reports it down. */
  agents: string[];
  /** The capability's live agents. */
  of: number;
  /** When it was first flagged, epoch ms (Redis time). */
  since: number;
}

/** What {@link DependencyWatch} needs. */
export interface DependencyWatchOptions {
  redis: RedisClient;
  keys: ReachKeys;
  fleet: FleetEventLog;
  logger: Logger;
  /** The probe interval (`REACH_PROBE_MS`): answers older than 1.5 of it are not counted. */
  probeIntervalMs: number;
}

const LIVE = new Set(['HEALTHY', 'SUSPECT', 'DEGRADED']);
/** Fewest agents a dependency must fail on to be flagged. */
export const MIN_FLAG_AGENTS = 2;

/**
 * Which dependencies are down fleet-wide (docs/PROTOCOL.md §6, Dependencies), from the agents'
 * latest probe answers: a dependency reported down by at least two of a capability's live agents
 * and by at least half of them, each answer within 1.5 probe intervals (one interval, and half
 * of one for the probe's own round trip), is flagged for that capability. Pure: the watch below
 * acts on it.
 */
export function flaggedDependencies(
  views: readonly FullAgentView[],
  nowMs: number,
  probeIntervalMs: number,
): Omit<FlaggedDependency, 'since'>[] {
  const freshFrom = nowMs - 1.5 * probeIntervalMs;
  const down = new Map<string, Set<string>>();
  const byCapability = new Map<string, string[]>();
  for (const v of views) {
    if (!LIVE.has(v.status)) continue;
    for (const c of v.capabilities)
      byCapability.set(c, [...(byCapability.get(c) ?? []), v.agent_id]);
    const check = v.health_check;
    if (!check || check.at < freshFrom) continue;
    for (const d of failingDependencies(check))
      down.set(d, (down.get(d) ?? new Set()).add(v.agent_id));
  }
  const out: Omit<FlaggedDependency, 'since'>[] = [];
  for (const [dependency, failing] of down) {
    if (failing.size < MIN_FLAG_AGENTS) continue;
    for (const [capability, members] of byCapability) {
      const agents = members.filter((id) => failing.has(id)).sort();
      if (agents.length >= MIN_FLAG_AGENTS && agents.length * 2 >= members.length)
        out.push({ dependency, capability, agents, of: members.length });
    }
  }
  return out.sort((a, b) =>
    a.dependency === b.dependency
      ? a.capability.localeCompare(b.capability)
      : a.dependency.localeCompare(b.dependency),
  );
}

const fieldOf = (f: { dependency: string; capability: string }) =>
  `${f.dependency}|${f.capability}`;

/**
 * Flags dependencies down fleet-wide, run by the leading registry-sync instance on each pass after
 * the probes: marks the agents that report a flagged dependency down SUSPECT at once (not after
 * REACH_PROBE_FAILURES failed probes, nor after a window of failed tasks), keeps the flags in
 * `keys.dependenciesDown()` (the `reach_dependency_down` gauge reads them), and writes a
 * `dependency` fleet event when one is flagged and when it clears. Returns how many agents it
 * marked (routers must learn of them).
 */
export class DependencyWatch {
  readonly #log: Logger;

  constructor(private readonly o: DependencyWatchOptions) {
    this.#log = o.logger.child({ module: 'dependencies' });
  }

  async check(views: readonly FullAgentView[]): Promise<number> {
    const { redis, keys } = this.o;
    const stored = await redis.hgetall(keys.dependenciesDown());
    const anyFailing = views.some(
      (v) => v.health_check && failingDependencies(v.health_check).length > 0,
    );
    if (!anyFailing && Object.keys(stored).length === 0) return 0;
    const [sec, usec] = await redis.time();
    const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    const flagged = flaggedDependencies(views, now, this.o.probeIntervalMs);
    const previous = new Map<string, FlaggedDependency>();
    for (const [field, text] of Object.entries(stored)) {
      try {
        previous.set(field, JSON.parse(text) as FlaggedDependency);
      } catch {
        // Rewritten below.
      }
    }
    const next: Record<string, string> = {};
    const byId = new Map(views.map((v) => [v.agent_id, v]));
    let marked = 0;
    for (const f of flagged) {
      const field = fieldOf(f);
      const before = previous.get(field);
      const entry: FlaggedDependency = { ...f, since: before?.since ?? now };
      next[field] = JSON.stringify(entry);
      if (!before) {
        this.#log.warn(
          { dependency: f.dependency, capability: f.capability, agents: f.agents, of: f.of },
          'dependency down on several agents; flagged fleet-wide',
        );
        this.o.fleet.append({
          kind: 'dependency',
          dependency: f.dependency,
          capability: f.capability,
          state: 'down',
          agents: f.agents,
          reason: `${f.dependency} down on ${f.agents.length} of ${f.of} agents of ${f.capability}`,
        });
      }
      for (const agentId of f.agents) {
        if (byId.get(agentId)?.dependency_down) continue;
        const reply = await dependencyDownScript.run(redis, {
          keys: { agent: keys.agent(agentId) },
          args: { dependency: f.dependency },
        });
        if (!reply.marked) continue;
        marked++;
        if (reply.previous !== 'SUSPECT')
          this.o.fleet.append({
            kind: 'status',
            agent_id: agentId,
            from: reply.previous,
            to: 'SUSPECT',
            reason: `dependency ${f.dependency} down fleet-wide`,
          });
      }
    }
    for (const [field, before] of previous) {
      if (next[field] !== undefined) continue;
      this.#log.info(
        { dependency: before.dependency, capability: before.capability },
        'dependency no longer down fleet-wide',
      );
      this.o.fleet.append({
        kind: 'dependency',
        dependency: before.dependency,
        capability: before.capability,
        state: 'up',
        reason: `${before.dependency} no longer down on several agents of ${before.capability}`,
      });
    }
    const tx = redis.multi().del(keys.dependenciesDown());
    if (Object.keys(next).length > 0) tx.hset(keys.dependenciesDown(), next);
    await tx.exec();
    return marked;
  }
}
