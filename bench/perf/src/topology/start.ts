import { Redis } from 'ioredis';
import { startLocalCluster, type LocalCluster } from '@agent-reach/process-kit';
import {
  TOPOLOGY_SYSTEMS,
  type BenchOptions,
  type SystemName,
  type TopologySystemName,
} from '../options.ts';
import type { ChildSet } from '../proc/children.ts';
import { recordPid } from '../proc/pidfiles.ts';
import { RedisGauge, type RedisNode } from '../proc/redis-nodes.ts';
import { callbackTopic, startReach } from '../stack/reach.ts';
import type { RunningSystem } from '../stack/running.ts';
import { hotKeyLine, hotKeys } from './placement.ts';

/** Key prefixes of the systems on the cluster (both share it, each frozen while the other runs). */
const PREFIX = { cluster: 'bench-c1', 'cluster-3r': 'bench-c3' } as const;

/** What `--topology cluster` started besides the session's one Redis. */
export interface Topology {
  /** `one-redis`, `cluster`, `cluster-3r`, in that order (those `opts.systems` names). */
  systems: RunningSystem[];
  /** The cluster's masters. */
  cluster: RedisGauge;
  /** Per cluster system, which master holds each one-slot key every task touches (see hotKeys). */
  placements: Partial<Record<SystemName, string>>;
  /** Stops the cluster; idempotent. */
  stop(): Promise<void>;
  /** SIGKILLs the cluster's nodes at once. */
  killNow(): void;
}

/** What {@link startTopology} needs from the session. */
export interface TopologyOptions {
  children: ChildSet;
  /** The session folder: pid files, nginx's files. */
  dir: string;
  /** The session's one Redis. */
  redisUrl: string;
  redis: RedisGauge;
  opts: BenchOptions;
  log: (line: string) => void;
}

/**
 * Starts a 3-master Redis Cluster (process-kit's startLocalCluster, no replicas) and on it, and on
 * the session's one Redis, the three systems of `--topology cluster`, each with the same fleet
 * (`opts.agents` agents over `opts.capabilities` capabilities) under a key prefix of its own.
 * The cluster's nodes keep nothing on disk, as the one Redis does: the comparison is of where the
 * work goes, not of fsync.
 */
export async function startTopology(t: TopologyOptions): Promise<Topology> {
  const { children, opts, log } = t;
  const cluster: LocalCluster = await startLocalCluster({ masters: 3 });
  const admins: Redis[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const a of admins) a.disconnect();
      await cluster.stop();
    })());
  try {
    const masters: RedisNode[] = [];
    for (const node of cluster.nodes) {
      await recordPid(t.dir, `redis-cluster-${node.port}`, node.pid, 'redis-server');
      const admin = new Redis(node.port, node.host, { maxRetriesPerRequest: 2 });
      admins.push(admin);
      await admin.config('SET', 'appendonly', 'no');
      masters.push({ name: `:${node.port}`, pid: node.pid, admin });
    }
    const gauge = new RedisGauge(masters);
    log(`Redis Cluster of ${masters.length} masters on ${cluster.seeds}`);
    const first = cluster.nodes[0];
    const clusterEnv = {
      REDIS_CLUSTER_NODES: cluster.seeds,
      REDIS_URL: `redis://${first?.host ?? '127.0.0.1'}:${first?.port ?? 0}`,
    };
    const fleet = { agents: opts.agents, capabilities: opts.capabilities };
    const common = {
      children,
      redisUrl: t.redisUrl,
      opts,
      fleet,
      workDir: t.dir,
      serviceEnv: { REACH_SHARDS: String(opts.shards) },
    };
    const specs: Record<TopologySystemName, Parameters<typeof startReach>[0]> = {
      'one-redis': {
        ...common,
        name: 'one-redis',
        prefix: 'bench-one',
        // Not the cluster, whatever the bench's own environment says.
        redisEnv: { REDIS_URL: t.redisUrl, REDIS_CLUSTER_NODES: '' },
        redis: t.redis,
      },
      cluster: {
        ...common,
        name: 'cluster',
        prefix: PREFIX.cluster,
        redisEnv: clusterEnv,
        redis: gauge,
      },
      'cluster-3r': {
        ...common,
        name: 'cluster-3r',
        prefix: PREFIX['cluster-3r'],
        redisEnv: clusterEnv,
        routers: opts.routers,
        redis: gauge,
      },
    };
    const wanted = TOPOLOGY_SYSTEMS.filter((s) => opts.systems.includes(s));
    const started = await Promise.allSettled(wanted.map((name) => startReach(specs[name])));
    const systems: RunningSystem[] = [];
    for (const s of started) if (s.status === 'fulfilled') systems.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) {
      // What did start is stopped with the session; nginx is not a Node child.
      await Promise.allSettled(systems.map(async (s) => s.stop?.()));
      throw failed.reason;
    }
    for (const s of systems)
      log(`${s.name} up: ${s.processes.map((p) => `${p.name}(${p.pid})`).join(' ')}`);
    const view = await cluster.topology();
    const placements: Partial<Record<SystemName, string>> = {};
    for (const name of wanted) {
      if (name === 'one-redis') continue;
      const prefix = PREFIX[name];
      const keys = await hotKeys(
        masters[0]?.admin as Redis,
        view,
        prefix,
        opts.shards,
        callbackTopic(name),
      );
      placements[name] = hotKeyLine(keys);
    }
    return {
      systems,
      cluster: gauge,
      placements,
      stop,
      killNow: () => {
        for (const n of cluster.nodes) {
          try {
            process.kill(n.pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
      },
    };
  } catch (err: unknown) {
    await stop();
    throw err;
  }
}
