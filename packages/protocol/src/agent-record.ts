import { AgentRecordField as F, type AgentRuntime } from './snapshot.ts';
import type { AgentView } from './schemas.ts';
import type { AgentStatus, Channel } from './states.ts';
import { DEFAULT_TENANT } from './tenants.ts';
import { healthScore, runtimePenalty, taskErrorRate } from './health.ts';
import { decodeAgentHealthCheck } from './probe-health.ts';

function int(value: string | undefined): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

function json<T>(value: string | undefined, fallback: T): T {
  if (!value) return fallback;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

/** The per-capability execution-time EWMAs kept in `ewma:<capability>` fields. */
function ewmaOf(record: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [field, value] of Object.entries(record)) {
    if (field.startsWith(F.ewmaPrefix)) out[field.slice(F.ewmaPrefix.length)] = Number(value);
  }
  return out;
}

/** An agent as registry-sync sees it: the API's view with the instance and epoch always there. */
export type FullAgentView = AgentView & Required<Pick<AgentView, 'instance_id' | 'epoch'>>;

/**
 * An agent as a key that is not an operator's sees it: without its instance_id and epoch, which
 * are for operators only (docs/SECURITY.md).
 */
export function withoutInstance(view: AgentView): AgentView {
  const { instance_id: _instance, epoch: _epoch, ...rest } = view;
  return rest;
}

/** The runtime figures of the last heartbeat that sent them, as a view's field. */
function runtimeOf(text: string | undefined): { runtime?: AgentRuntime } {
  const r = json<Partial<AgentRuntime> | null>(text, null);
  if (!r || typeof r.loop_lag_p99_ms !== 'number' || typeof r.rss_bytes !== 'number') return {};
  return {
    runtime: {
      loop_lag_p99_ms: r.loop_lag_p99_ms,
      ...(typeof r.gc_share === 'number' ? { gc_share: r.gc_share } : {}),
      rss_bytes: r.rss_bytes,
    },
  };
}

/** The latest probe's health check answer, as a view's field. */
function healthCheckOf(text: string | undefined): Pick<AgentView, 'health_check'> {
  const check = decodeAgentHealthCheck(text);
  if (!check) return {};
  return { health_check: { ok: check.ok, at: check.at, dependencies: check.dependencies } };
}

/** Turns an agent record hash into the API's view; undefined when the record is absent. */
export function toAgentView(
  record: Record<string, string>,
  inflight: number,
  nowMs: number,
): FullAgentView | undefined {
  const agentId = record[F.agentId];
  if (!agentId) return undefined;
  const leaseAt = int(record[F.leaseAt]);
  const runtime = runtimeOf(record[F.runtime]);
  return {
    agent_id: agentId,
    instance_id: record[F.instanceId] ?? '',
    epoch: int(record[F.epoch]),
    tenant: record[F.tenant] || DEFAULT_TENANT,
    shared: record[F.shared] === '1',
    status: (record[F.status] ?? 'OFFLINE') as AgentStatus,
    capabilities: json<string[]>(record[F.capabilities], []),
    max_concurrency: int(record[F.maxConcurrency]),
    inflight,
    reported_inflight: int(record[F.reportedInflight]),
    region: record[F.region] ?? '',
    channel: (record[F.channel] ?? 'push') as Channel,
    registered_at: int(record[F.registeredAt]),
    last_heartbeat_at: leaseAt,
    lease_age_ms: Math.max(0, nowMs - leaseAt),
    ejected_until: int(record[F.ejectedUntil]),
    // From its outcomes, less what its runtime figures take (a stalling loop, a GC storm).
    health_score: Math.max(
      0,
      healthScore(record[F.outcomes] ?? '') - runtimePenalty(runtime.runtime),
    ),
    health_samples: taskErrorRate(record[F.outcomes] ?? '').tasks,
    degraded_until: record[F.degraded] === '1' ? int(record[F.degradedUntil]) : 0,
    tags: json<string[]>(record[F.tags], []),
    observe: record[F.observe] === '1',
    ...(record[F.unreachable] === '1' ? { unreachable: true } : {}),
    priority: int(record[F.priority]),
    weight: Number(record[F.weight] ?? 1) || 1,
    ewma_ms: ewmaOf(record),
    ...runtime,
    ...healthCheckOf(record[F.healthCheck]),
    ...(record[F.dependencyDown] ? { dependency_down: record[F.dependencyDown] } : {}),
    meta: json<Record<string, unknown>>(record[F.meta], {}),
  };
}
