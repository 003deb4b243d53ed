import {
  DEFAULT_TENANT,
  HEALTH_ROUTING_MIN_OUTCOMES,
  type FullAgentView,
  type SnapshotAgent,
} from '@agent-reach/protocol';

/** An agent as snapshots and deltas carry it: what routers route on, defaults left out. */
export function snapshotAgent(v: FullAgentView): SnapshotAgent {
  return {
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
  };
}
