import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  AgentRecordField as F,
  probeSuccessRun,
  taskErrorRate,
  type ReachKeys,
} from '@agent-reach/protocol';
import type { FleetEventLog } from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import { degradeScript } from './commands/degrade.ts';
import { recoverScript } from './commands/recover.ts';

/** When an agent turns DEGRADED and when it comes back. */
export interface DegradeSettings {
  degradeErrorRate: number;
  degradeMinTasks: number;
  degradeCooldownMs: number;
  degradeRecoverProbes: number;
  /** Largest share of a capability's live agents ejected or DEGRADED at once. */
  ejectMaxShare: number;
}

/** One agent as the sweep reads it. */
export interface HealthRow {
  id: string;
  status: string;
  outcomes: string;
  degraded: boolean;
  degradedUntil: number;
  ejectedUntil: number;
  capabilities: string[];
}

/** What one sweep decided. */
export interface HealthDecisions {
  degrade: { id: string; errors: number; tasks: number }[];
  recover: string[];
}

const LIVE = new Set(['HEALTHY', 'SUSPECT', 'DEGRADED']);

/**
 * The decisions of one pass, from the rows alone (pure, unit-tested): a HEALTHY agent whose
 * error rate is over the bound, with enough tasks in its window, turns DEGRADED unless that
 * would put more than `ejectMaxShare` of one of its capabilities' live agents out (ejected or
 * DEGRADED); a DEGRADED agent past its cooldown whose latest probes passed comes back.
 */
export function decideHealth(
  rows: readonly HealthRow[],
  now: number,
  s: DegradeSettings,
): HealthDecisions {
  const live = new Map<string, number>();
  const out = new Map<string, number>();
  for (const r of rows) {
    if (!LIVE.has(r.status)) continue;
    for (const c of r.capabilities) {
      live.set(c, (live.get(c) ?? 0) + 1);
      if (r.degraded || r.ejectedUntil > now) out.set(c, (out.get(c) ?? 0) + 1);
    }
  }
  const decisions: HealthDecisions = { degrade: [], recover: [] };
  for (const r of rows) {
    if (r.degraded) {
      if (
        r.status === 'DEGRADED' &&
        now >= r.degradedUntil &&
        probeSuccessRun(r.outcomes) >= s.degradeRecoverProbes
      )
        decisions.recover.push(r.id);
      continue;
    }
    if (r.status !== 'HEALTHY') continue;
    const { tasks, errors, rate } = taskErrorRate(r.outcomes);
    if (tasks < s.degradeMinTasks || rate <= s.degradeErrorRate) continue;
    const allowed = r.capabilities.every(
      (c) => (out.get(c) ?? 0) + 1 <= Math.floor((live.get(c) ?? 0) * s.ejectMaxShare),
    );
    if (!allowed) continue;
    for (const c of r.capabilities) out.set(c, (out.get(c) ?? 0) + 1);
    decisions.degrade.push({ id: r.id, errors, tasks });
  }
  return decisions;
}

/** What a health sweep needs. */
export interface HealthSweepOptions {
  redis: RedisClient;
  keys: ReachKeys;
  fleet: FleetEventLog;
  events: EventSink;
  settings: DegradeSettings;
  logger: Logger;
}

/**
 * Turns agents DEGRADED from their health windows and brings them back (a duty of the
 * housekeeping pass): each change is a fleet event, a point in InfluxDB (stage `degraded` or
 * `recovered`, one per capability, task_id `agent:<agent_id>`) and a log line.
 */
export class HealthSweep {
  private readonly log: Logger;

  constructor(private readonly o: HealthSweepOptions) {
    this.log = o.logger.child({ module: 'health' });
  }

  /** One pass; returns how many agents changed state. */
  async sweep(now: number): Promise<number> {
    const rows = await this.load();
    const { degrade, recover } = decideHealth(rows, now, this.o.settings);
    const byId = new Map(rows.map((r) => [r.id, r]));
    let changed = 0;
    for (const d of degrade) {
      const until = now + this.o.settings.degradeCooldownMs;
      const degraded = await degradeScript.run(this.o.redis, {
        keys: { agent: this.o.keys.agent(d.id) },
        args: { until },
      });
      if (!degraded) continue;
      changed++;
      const reason = `${d.errors} errors in its last ${d.tasks} tasks`;
      this.log.warn({ agent_id: d.id, errors: d.errors, tasks: d.tasks, until }, 'agent DEGRADED');
      this.o.fleet.append({
        kind: 'status',
        agent_id: d.id,
        from: 'HEALTHY',
        to: 'DEGRADED',
        reason,
      });
      this.point('degraded', byId.get(d.id), now, reason);
    }
    for (const id of recover) {
      const recovered = await recoverScript.run(this.o.redis, {
        keys: { agent: this.o.keys.agent(id) },
        args: {},
      });
      if (!recovered) continue;
      changed++;
      const reason = `${this.o.settings.degradeRecoverProbes} probes passed after the cooldown`;
      this.log.info({ agent_id: id }, 'agent recovered from DEGRADED');
      this.o.fleet.append({
        kind: 'status',
        agent_id: id,
        from: 'DEGRADED',
        to: 'HEALTHY',
        reason,
      });
      this.point('recovered', byId.get(id), now, reason);
    }
    return changed;
  }

  private point(
    stage: 'degraded' | 'recovered',
    row: HealthRow | undefined,
    at: number,
    reason: string,
  ): void {
    for (const capability of row?.capabilities ?? []) {
      this.o.events.write({
        stage,
        capability,
        agent_id: row?.id ?? '',
        task_id: `agent:${row?.id ?? ''}`,
        attempt: 0,
        at,
        reason,
      });
    }
  }

  private async load(): Promise<HealthRow[]> {
    const ids = await this.o.redis.smembers(this.o.keys.agents());
    if (ids.length === 0) return [];
    const pipeline = slotPipeline(this.o.redis);
    for (const id of ids)
      pipeline.add(this.o.keys.agent(id), (p) =>
        p.hmget(
          this.o.keys.agent(id),
          F.status,
          F.outcomes,
          F.degraded,
          F.degradedUntil,
          F.ejectedUntil,
          F.capabilities,
        ),
      );
    const replies = await pipeline.exec();
    const rows: HealthRow[] = [];
    ids.forEach((id, i) => {
      const [status, outcomes, degraded, until, ejected, caps] = (replies[i]?.[1] ?? []) as (
        string | null
      )[];
      if (!status) return;
      let capabilities: string[];
      try {
        capabilities = JSON.parse(caps ?? '[]') as string[];
      } catch {
        capabilities = [];
      }
      rows.push({
        id,
        status,
        outcomes: outcomes ?? '',
        degraded: degraded === '1',
        degradedUntil: Number(until ?? 0),
        ejectedUntil: Number(ejected ?? 0),
        capabilities,
      });
    });
    return rows;
  }
}
