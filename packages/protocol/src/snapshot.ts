import type { AgentStatus, Channel } from './states.ts';

/** Field names of an agent's record hash, written by registry-sync and re-checked by routers. */
/** Runtime figures an agent's heartbeat carries (docs/OBSERVABILITY.md, Agent runtime). */
export interface AgentRuntime {
  /** p99 of the event loop's (Python: the heartbeat thread's) wake-up delay since the last beat, ms. */
  loop_lag_p99_ms: number;
  /** Share of the time since the last beat spent in garbage collection, 0–1 (Node only). */
  gc_share?: number;
  /** Resident set size, bytes. */
  rss_bytes: number;
}

export const AgentRecordField = {
  agentId: 'agent_id',
  instanceId: 'instance_id',
  epoch: 'epoch',
  status: 'status',
  capabilities: 'capabilities',
  maxConcurrency: 'max_concurrency',
  region: 'region',
  channel: 'channel',
  meta: 'meta',
  tokenHash: 'token_hash',
  registeredAt: 'registered_at',
  leaseAt: 'lease_at',
  reportedInflight: 'reported_inflight',
  busy: 'busy',
  ready: 'ready',
  zombie: 'zombie',
  slowStreak: 'slow_streak',
  ejectedUntil: 'ejected_until',
  /** The agent's recent outcomes, one letter each, newest last (health.ts `HealthOutcome`). */
  outcomes: 'outcomes',
  /** `1` while the agent is DEGRADED (heartbeats keep it so). */
  degraded: 'degraded',
  /** Epoch ms before which a DEGRADED agent cannot recover (its cooldown). */
  degradedUntil: 'degraded_until',
  /** `1` after consecutive failed deep probes: SUSPECT until a probe passes. */
  unwell: 'unwell',
  /** `1` while the agent's relay reports its endpoint unreachable: SUSPECT until it answers again. */
  unreachable: 'unreachable',
  /** JSON of the runtime figures of the agent's last heartbeat (`AgentRuntime`). */
  runtime: 'runtime',
  /** JSON of its latest probe's health check answer, with when it came (`AgentHealthCheck`). */
  healthCheck: 'health_check',
  /**
   * The dependency flagged down fleet-wide that made it SUSPECT (docs/PROTOCOL.md §6,
   * Dependencies): routed nothing until a probe passes without it.
   */
  dependencyDown: 'dependency_down',
  tags: 'tags',
  observe: 'observe',
  priority: 'priority',
  weight: 'weight',
  /** The tenant of the key that registered the agent (absent in records from before tenants: `default`). */
  tenant: 'tenant',
  /** `1` when an operator key registered the agent to serve every tenant. */
  shared: 'shared',
  /**
   * Hex key of the instance's ack signatures (HMAC-SHA256, docs/PROTOCOL.md §4), and the previous
   * instance's with its epoch, so acks it wrote before it was fenced still verify.
   */
  ackKey: 'ack_key',
  ackKeyPrev: 'ack_key_prev',
  ackEpochPrev: 'ack_epoch_prev',
  /** JSON object: capability → JSON Schema of its payload, as registered (`input_schemas`). */
  inputSchemas: 'input_schemas',
  /** Prefix of per-capability execution-time EWMA fields: `ewma:<capability>`. */
  ewmaPrefix: 'ewma:',
} as const;

/** One agent in a registry snapshot. */
export interface SnapshotAgent {
  agent_id: string;
  instance_id: string;
  epoch: number;
  status: AgentStatus;
  capabilities: string[];
  max_concurrency: number;
  /** Live count of delivered, unfinished tasks when the snapshot was taken. */
  inflight: number;
  region: string;
  channel: Channel;
  lease_age_ms: number;
  /** Epoch ms until which the agent is ejected as a slow outlier; 0 when not. */
  ejected_until?: number;
  /** Extra routing tags besides its capabilities. */
  tags?: string[];
  /** 0–100 from the agent's recent outcomes (health.ts); absent for 100. */
  health_score?: number;
  /** Registered in observation mode: probes only until switched to serve. */
  observe?: boolean;
  /** An endpoint agent whose relay reports its endpoint not answering: routed nothing until it answers. */
  unreachable?: boolean;
  /** 0–10; biases the choice among agents of similar load. */
  priority?: number;
  /** 0.1–10 (1 = neutral); biases the choice among agents of similar load. */
  weight?: number;
  /** Execution-time EWMA per capability, ms. */
  ewma_ms?: Record<string, number>;
  /** The runtime figures of its last heartbeat, when it sends them. */
  runtime?: AgentRuntime;
  /** A dependency flagged down fleet-wide made it SUSPECT: routed nothing until it recovers. */
  dependency_down?: string;
  /** The tenant of the key that registered the agent; absent for the default tenant. */
  tenant?: string;
  /** Registered with an operator key as serving every tenant; absent for false. */
  shared?: boolean;
}

/** The versioned registry snapshot routers hold in memory. */
export interface RegistrySnapshot {
  version: number;
  /** Redis server time of the write, epoch ms. */
  written_at: number;
  agents: SnapshotAgent[];
}

/** Parses a snapshot written by registry-sync; undefined when absent or unreadable. */
export function decodeSnapshot(text: string | null): RegistrySnapshot | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as RegistrySnapshot;
    if (typeof parsed.version !== 'number' || !Array.isArray(parsed.agents)) return undefined;
    return parsed;
  } catch {
    return undefined;
  }
}

/**
 * What changed in the registry since the version before (`version − 1`): the changed agents in
 * full, and the ids of agents gone from it. Entry `<version>-0` of `keys.snapshotDeltas()`, with
 * fields `agents` and `removed` (JSON arrays) and `written_at`. A version with no entry there is a
 * full snapshot (`keys.snapshot()`): a router that finds a gap reloads the full snapshot.
 */
export interface SnapshotDelta {
  version: number;
  /** Redis server time of the write, epoch ms. */
  written_at: number;
  agents: SnapshotAgent[];
  removed: string[];
}

/**
 * Parses one entry of the delta stream (`[id, [field, value, …]]` as XRANGE returns it);
 * undefined when it is not a delta this version understands.
 */
export function decodeSnapshotDelta(
  id: string,
  fields: readonly string[],
): SnapshotDelta | undefined {
  const version = Number(id.split('-')[0]);
  if (!Number.isSafeInteger(version) || version <= 0) return undefined;
  const get = (name: string): string | undefined => {
    for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
    return undefined;
  };
  try {
    const agents = JSON.parse(get('agents') ?? 'null') as unknown;
    const removed = JSON.parse(get('removed') ?? '[]') as unknown;
    if (!Array.isArray(agents) || !Array.isArray(removed)) return undefined;
    if (!removed.every((r) => typeof r === 'string')) return undefined;
    return {
      version,
      written_at: Number(get('written_at') ?? 0),
      agents: agents as SnapshotAgent[],
      removed,
    };
  } catch {
    return undefined;
  }
}
