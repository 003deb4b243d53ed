import type { RedisClient } from '../redis-connection.ts';
import { slotPipeline } from '../slot-pipeline.ts';
import { Gauge, type Registry } from 'prom-client';
import {
  AGENT_STATUSES,
  decodeSnapshot,
  decodeSnapshotDelta,
  WORKER_GROUP,
  type AgentRuntime,
  type ReachKeys,
  type RegistrySnapshot,
  type SnapshotAgent,
} from '@agent-reach/protocol';

/** Options of {@link registerFleetGauges}. */
export interface FleetGaugeOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** Most agents (and capability pools) whose streams are sampled per scrape. @default 500 */
  maxAgents?: number;
  /** A scrape stops waiting for Redis after this long and reports `reach_fleet_sample_ok 0`. @default 2000 */
  timeoutMs?: number;
  /** A sample is reused by scrapes this close together (several Prometheus servers). @default 1000 */
  cacheMs?: number;
}

interface StreamDepth {
  name: string;
  backlog: number | undefined;
  pending: number;
}

/** What one scrape reads from Redis. */
export interface FleetSample {
  ok: boolean;
  byStatus: Record<string, number>;
  inboxes: StreamDepth[];
  pools: StreamDepth[];
  deadLetters: number;
  due: number;
  acksBacklog: number;
  counters: [string, number][];
  /** The sampled agents' runtime figures from their last heartbeat, where they send them. */
  runtimes: { agentId: string; runtime: AgentRuntime }[];
  /** Dependencies flagged down fleet-wide, per capability, with the agents they fail on. */
  dependenciesDown: { dependency: string; capability: string; agents: number }[];
}

const EMPTY: FleetSample = {
  ok: false,
  byStatus: {},
  runtimes: [],
  dependenciesDown: [],
  inboxes: [],
  pools: [],
  deadLetters: 0,
  due: 0,
  acksBacklog: 0,
  counters: [],
};
const MAX_STORE_COUNTERS = 200;

type Reply = [Error | null, unknown][];

/** The worker group's `lag` (entries not yet read) and `pending` from an XINFO GROUPS reply. */
function groupDepth(name: string, reply: unknown): StreamDepth | undefined {
  if (!Array.isArray(reply)) return undefined;
  for (const group of reply as unknown[]) {
    if (!Array.isArray(group)) continue;
    const info: Record<string, unknown> = {};
    for (let i = 0; i + 1 < group.length; i += 2) info[String(group[i])] = group[i + 1];
    if (info.name !== WORKER_GROUP) continue;
    const lag = info.lag;
    return {
      name,
      backlog: lag === null || lag === undefined ? undefined : Number(lag),
      pending: Number(info.pending ?? 0),
    };
  }
  return undefined;
}

/** Deltas read after the full snapshot, at most: more and the snapshot alone is reported. */
const DELTAS_READ = 2000;

/**
 * The snapshot's agents by id with the deltas written after it applied (docs/PROTOCOL.md §7),
 * so a registration or a status change shows before the next full snapshot.
 */
async function withDeltas(
  redis: RedisClient,
  keys: ReachKeys,
  snapshot: RegistrySnapshot | undefined,
): Promise<Map<string, SnapshotAgent>> {
  const byId = new Map((snapshot?.agents ?? []).map((a) => [a.agent_id, a]));
  const from = `${(snapshot?.version ?? 0) + 1}-0`;
  const entries = await redis.xrange(keys.snapshotDeltas(), from, '+', 'COUNT', DELTAS_READ);
  if (entries.length >= DELTAS_READ) return byId;
  for (const [id, fields] of entries) {
    const delta = decodeSnapshotDelta(id, fields);
    if (!delta) continue;
    for (const gone of delta.removed) byId.delete(gone);
    for (const agent of delta.agents) byId.set(agent.agent_id, agent);
  }
  return byId;
}

/**
 * Reads the fleet's state with a bounded number of commands: one pipeline for the snapshot and
 * the queue sizes, one read of the deltas after the snapshot, one pipeline for XINFO GROUPS of
 * at most `maxAgents` inboxes and pools. Never scans the keyspace.
 */
async function readFleet(
  redis: RedisClient,
  keys: ReachKeys,
  maxAgents: number,
): Promise<FleetSample> {
  const head = slotPipeline(redis)
    .add(keys.snapshot(), (p) => p.get(keys.snapshot()))
    .add(keys.dlq(), (p) => p.zcard(keys.dlq()))
    .add(keys.stats(), (p) => p.hgetall(keys.stats()));
  // Every shard of the due set and of the acks stream.
  const shards = keys.shards();
  for (let shard = 0; shard < shards; shard++)
    head
      .add(keys.due(shard), (p) => p.zcard(keys.due(shard)))
      .add(keys.acks(shard), (p) => p.xlen(keys.acks(shard)));
  head.add(keys.dependenciesDown(), (p) => p.hgetall(keys.dependenciesDown()));
  const first = (await head.exec()) as Reply;
  const value = (i: number): unknown => (first[i]?.[0] ? undefined : first[i]?.[1]);
  let due = 0;
  let acksBacklog = 0;
  for (let shard = 0; shard < shards; shard++) {
    due += Number(value(3 + 2 * shard) ?? 0);
    acksBacklog += Number(value(4 + 2 * shard) ?? 0);
  }
  const dependenciesDown = Object.values(
    (value(3 + 2 * shards) as Record<string, string> | undefined) ?? {},
  ).flatMap((text) => {
    try {
      const f = JSON.parse(text) as {
        dependency?: unknown;
        capability?: unknown;
        agents?: unknown;
      };
      return typeof f.dependency === 'string' && typeof f.capability === 'string'
        ? [
            {
              dependency: f.dependency,
              capability: f.capability,
              agents: Array.isArray(f.agents) ? f.agents.length : 0,
            },
          ]
        : [];
    } catch {
      return [];
    }
  });
  const snapshot = decodeSnapshot((value(0) as string | null | undefined) ?? null);
  const agents = [...(await withDeltas(redis, keys, snapshot)).values()].sort((a, b) =>
    a.agent_id < b.agent_id ? -1 : 1,
  );
  const byStatus: Record<string, number> = Object.fromEntries(AGENT_STATUSES.map((s) => [s, 0]));
  for (const a of agents) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  const sampled = agents.slice(0, maxAgents);
  // Capability pools exist once the protocol has a key for them; until then only inboxes.
  const poolKey = (keys as Partial<{ pool: (capability: string) => string }>).pool;
  const capabilities = poolKey
    ? [...new Set(agents.flatMap((a) => a.capabilities))].sort().slice(0, maxAgents)
    : [];
  const second = slotPipeline(redis);
  for (const a of sampled) {
    const inbox = keys.inbox(a.agent_id);
    second.add(inbox, (p) => p.xinfo('GROUPS', inbox));
  }
  if (poolKey)
    for (const c of capabilities) {
      const pool = poolKey.call(keys, c);
      second.add(pool, (p) => p.xinfo('GROUPS', pool));
    }
  const replies = (await second.exec()) as Reply;
  const depth = (i: number, name: string) =>
    replies[i]?.[0] ? undefined : groupDepth(name, replies[i]?.[1]);
  const inboxes = sampled.flatMap((a, i) => depth(i, a.agent_id) ?? []);
  const pools = capabilities.flatMap((c, i) => depth(sampled.length + i, c) ?? []);
  const stats = (value(2) as Record<string, string> | undefined) ?? {};
  const counters = Object.entries(stats)
    .slice(0, MAX_STORE_COUNTERS)
    .map(([k, v]): [string, number] => [k, Number(v)])
    .filter(([, v]) => Number.isFinite(v));
  return {
    ok: true,
    byStatus,
    inboxes,
    pools,
    deadLetters: Number(value(1) ?? 0),
    due,
    acksBacklog,
    counters,
    dependenciesDown,
    runtimes: sampled.flatMap((a) =>
      a.runtime ? [{ agentId: a.agent_id, runtime: a.runtime }] : [],
    ),
  };
}

/** A sampler shared by every gauge of one scrape, with a deadline and a short cache. */
function cachedSampler(
  read: () => Promise<FleetSample>,
  timeoutMs: number,
  cacheMs: number,
): () => Promise<FleetSample> {
  let current: { at: number; sample: Promise<FleetSample> } | undefined;
  return () => {
    const now = Date.now();
    if (current && now - current.at < cacheMs) return current.sample;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<FleetSample>((resolve) => {
      timer = setTimeout(() => resolve(EMPTY), timeoutMs);
      timer.unref();
    });
    const sample = Promise.race([read().catch(() => EMPTY), deadline]).finally(() =>
      clearTimeout(timer),
    );
    current = { at: now, sample };
    return sample;
  };
}

/**
 * Gauges of the whole fleet, read from Redis when Prometheus scrapes (never on the hot path):
 * `reach_agents{status}` from the registry snapshot; `reach_inbox_backlog{agent_id}` (entries no
 * worker has read yet) and `reach_inbox_pending{agent_id}` (read, not yet acknowledged) for at
 * most `maxAgents` agents; the same per capability pool once pools have a key;
 * `reach_dead_letters`, `reach_tasks_due` (retries waiting, deliveries to check),
 * `reach_acks_backlog`, the dependencies flagged down fleet-wide (`reach_dependency_down`,
 * `reach_dependency_failing_agents`) and the server's counters hash as `reach_store_counter{name}`
 * (among them `probes_passed`, `probes_failed`, `dead_lettered:<reason>`, `shadow_sent`,
 * `shadow_dropped`).
 * Every instance reports the same fleet: aggregate with `max`, not `sum`.
 */
export function registerFleetGauges(registry: Registry, opts: FleetGaugeOptions): void {
  const maxAgents = opts.maxAgents ?? 500;
  const sample = cachedSampler(
    () => readFleet(opts.redis, opts.keys, maxAgents),
    opts.timeoutMs ?? 2000,
    opts.cacheMs ?? 1000,
  );
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (g: Gauge<L>, s: FleetSample) => void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const s = await sample();
        this.reset();
        if (s.ok) fill(this, s);
      },
    });
  new Gauge({
    name: 'reach_fleet_sample_ok',
    help: '1 when this scrape read the fleet state from Redis, 0 when Redis did not answer in time',
    registers: [registry],
    async collect() {
      this.set((await sample()).ok ? 1 : 0);
    },
  });
  gauge(
    'reach_agents',
    'Registered agents by status, from the registry snapshot',
    ['status'],
    (g, s) => {
      for (const [status, n] of Object.entries(s.byStatus)) g.set({ status }, n);
    },
  );
  gauge(
    'reach_inbox_backlog',
    "Entries in an agent's inbox that no worker has read yet",
    ['agent_id'],
    (g, s) => {
      for (const d of s.inboxes)
        if (d.backlog !== undefined) g.set({ agent_id: d.name }, d.backlog);
    },
  );
  gauge(
    'reach_inbox_pending',
    "Entries of an agent's inbox read but not yet acknowledged",
    ['agent_id'],
    (g, s) => {
      for (const d of s.inboxes) g.set({ agent_id: d.name }, d.pending);
    },
  );
  gauge(
    'reach_pool_backlog',
    "Entries in a capability's pool that no worker has read yet",
    ['capability'],
    (g, s) => {
      for (const d of s.pools)
        if (d.backlog !== undefined) g.set({ capability: d.name }, d.backlog);
    },
  );
  gauge(
    'reach_pool_pending',
    "Entries of a capability's pool read but not yet acknowledged",
    ['capability'],
    (g, s) => {
      for (const d of s.pools) g.set({ capability: d.name }, d.pending);
    },
  );
  gauge('reach_dead_letters', 'Tasks in the dead-letter queue', [], (g, s) => g.set(s.deadLetters));
  gauge('reach_tasks_due', 'Tasks waiting for a retry or a delivery check', [], (g, s) =>
    g.set(s.due),
  );
  gauge(
    'reach_acks_backlog',
    'Receipts and completions on the acks stream not yet applied',
    [],
    (g, s) => g.set(s.acksBacklog),
  );
  gauge(
    'reach_agent_event_loop_lag_p99_seconds',
    "p99 of an agent's event-loop delay between its last two heartbeats (Python: its heartbeat thread's)",
    ['agent_id'],
    (g, s) => {
      for (const r of s.runtimes) g.set({ agent_id: r.agentId }, r.runtime.loop_lag_p99_ms / 1000);
    },
  );
  gauge(
    'reach_agent_gc_share',
    'Share of the time between its last two heartbeats a Node agent spent in garbage collection',
    ['agent_id'],
    (g, s) => {
      for (const r of s.runtimes)
        if (r.runtime.gc_share !== undefined) g.set({ agent_id: r.agentId }, r.runtime.gc_share);
    },
  );
  gauge(
    'reach_agent_resident_memory_bytes',
    "An agent's resident set size at its last heartbeat",
    ['agent_id'],
    (g, s) => {
      for (const r of s.runtimes) g.set({ agent_id: r.agentId }, r.runtime.rss_bytes);
    },
  );
  gauge(
    'reach_dependency_down',
    'A dependency flagged down fleet-wide for a capability (1 while flagged)',
    ['dependency', 'capability'],
    (g, s) => {
      for (const d of s.dependenciesDown)
        g.set({ dependency: d.dependency, capability: d.capability }, 1);
    },
  );
  gauge(
    'reach_dependency_failing_agents',
    'Agents of a capability whose latest probe reports a flagged dependency down',
    ['dependency', 'capability'],
    (g, s) => {
      for (const d of s.dependenciesDown)
        g.set({ dependency: d.dependency, capability: d.capability }, d.agents);
    },
  );
  gauge(
    'reach_store_counter',
    'Counters kept in Redis by the services (refused acks, …), by field name',
    ['name'],
    (g, s) => {
      for (const [name, n] of s.counters) g.set({ name }, n);
    },
  );
}
