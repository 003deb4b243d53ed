import type { Redis } from 'ioredis';
import type { AgentView, ReachKeys, SnapshotAgent } from '@agent-reach/protocol';
import type { AgentRegistry } from '../registry/agent-registry.ts';

/** Writes the versioned registry snapshot routers read. */
export class SnapshotWriter {
  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly registry: AgentRegistry,
  ) {}

  /** Reads every agent (or uses the views given) and writes a new snapshot; returns its version. */
  async write(given?: readonly AgentView[]): Promise<number> {
    const views = given ?? (await this.registry.list());
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
      ...(v.observe ? { observe: true } : {}),
      ...(v.priority ? { priority: v.priority } : {}),
      ...(v.weight !== 1 ? { weight: v.weight } : {}),
      ...(Object.keys(v.ewma_ms).length > 0 ? { ewma_ms: v.ewma_ms } : {}),
    }));
    const [version] = await this.redis.reachSnapshot(
      this.keys.snapshot(),
      this.keys.snapshotVersion(),
      JSON.stringify(agents),
      this.keys.snapshotChannel(),
    );
    return version;
  }
}
