import { SnapshotHolder, type SnapshotHolderOptions } from '@agent-reach/dispatch';
import { reachKeys, type RegistrySnapshot, type SnapshotAgent } from '@agent-reach/protocol';
import type { SimAgentSpec } from './workload.ts';

/** The one capability every simulated agent serves. */
export const SIM_CAPABILITY = 'sim';

type HolderArgs = SnapshotHolderOptions;

/**
 * The snapshot registry-sync would write for an agent. The one place that builds a
 * `SnapshotAgent`: when the protocol adds a field the policy reads, fill it here.
 */
export function toSnapshotAgent(spec: SimAgentSpec, inflight: number): SnapshotAgent {
  return {
    agent_id: spec.agent_id,
    instance_id: `${spec.agent_id}-1`,
    epoch: 1,
    status: 'HEALTHY',
    capabilities: [SIM_CAPABILITY],
    max_concurrency: spec.max_concurrency,
    inflight,
    region: '',
    channel: 'push',
    lease_age_ms: 0,
    ...(spec.health_score !== undefined && spec.health_score < 100
      ? { health_score: spec.health_score }
      : {}),
  };
}

/**
 * The registry snapshot as the simulated registry-sync last wrote it, and the routers' views of
 * it. Each view is the router's real `SnapshotHolder` reading from an in-memory stand-in for
 * Redis, so the sim sees exactly what a router sees: the snapshot plus the inflight counts its
 * own deliveries returned since, reset when a new version loads.
 */
export class SnapshotBoard {
  private stored: string | null = null;
  private version = 0;
  private readonly keys = reachKeys('sim');
  private readonly views: SnapshotHolder[] = [];

  /** A new router's view; it loads the latest snapshot on the next `publish`. */
  newView(snapshotIntervalMs: number): SnapshotHolder {
    // The version counter and an empty delta stream: every version is a full snapshot.
    const store = {
      get: (key: string): Promise<string | null> =>
        Promise.resolve(
          key === this.keys.snapshot()
            ? this.stored
            : key === this.keys.snapshotVersion()
              ? String(this.version)
              : null,
        ),
      xrange: (): Promise<[string, string[]][]> => Promise.resolve([]),
    };
    const logger = {
      child: () => logger,
      // The holder logs and carries on with the old snapshot when a read fails; in the lab
      // that would silently measure a frozen view, so fail the run instead.
      warn: (ctx: { err?: unknown }, msg: string) => {
        throw new Error(`router view: ${msg}`, { cause: ctx.err });
      },
    };
    const holder = new SnapshotHolder({
      redis: store as unknown as HolderArgs['redis'],
      subscriber: {} as HolderArgs['subscriber'],
      keys: this.keys,
      intervalMs: snapshotIntervalMs,
      logger: logger as unknown as HolderArgs['logger'],
    });
    this.views.push(holder);
    return holder;
  }

  /**
   * Writes a new snapshot version with each agent's live inflight count (as registry-sync
   * does) and lets every router load it, as the pub/sub notification makes them do.
   */
  async publish(
    atMs: number,
    agents: readonly { spec: SimAgentSpec; inflight: number }[],
  ): Promise<void> {
    this.version += 1;
    const snapshot: RegistrySnapshot = {
      version: this.version,
      written_at: Math.round(atMs),
      agents: agents.map((a) => toSnapshotAgent(a.spec, a.inflight)),
    };
    this.stored = JSON.stringify(snapshot);
    for (const view of this.views) await view.reload();
  }
}
