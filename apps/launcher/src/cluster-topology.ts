/**
 * The seed's deployment on one machine, as `npm start -- --cluster` runs it and the failover
 * test starts it: a Redis Cluster of 3 masters with a replica each, 2 registry-sync instances and
 * 3 routers, with nginx in front of the routers (callers) and of the registry-sync instances
 * (agents).
 */
import { join } from 'node:path';
import {
  freePort,
  onFreePort,
  portTaken,
  requireBinaries,
  startLoadBalancer,
  startLocalCluster,
  startNodeService,
  type LocalCluster,
  type ManagedProcess,
  type ServiceProcess,
} from '@agent-reach/process-kit';
import { entryOf } from './entries.ts';

/** Options of {@link startClusterTopology}. */
export interface ClusterTopologyOptions {
  /** The cluster's nodes and nginx keep their files here (`cluster/`, `nginx/`). */
  stateDir: string;
  /** Seed nodes of a Redis Cluster to use (`host:port,…`, REDIS_CLUSTER_NODES): none is started. */
  clusterNodes?: string;
  /**
   * Ports of the nodes started, masters first (each needs port + 10000 free for the cluster bus).
   * With the same ports and `stateDir`, a cluster formed before is started again with its data.
   * @default free ports
   */
  clusterPorts?: readonly number[];
  /** How long a master may be unreachable before its replica takes over. @default 2000 */
  nodeTimeoutMs?: number;
  /**
   * nginx's port for callers, in front of the routers.
   * @default a free port, picked as nginx starts (again should another process take it first)
   */
  routerPort?: number;
  /** nginx's port for agents, in front of the registry-sync instances. @default as routerPort */
  registryPort?: number;
  /** @default 3 */
  routers?: number;
  /** @default 2 */
  registries?: number;
  /** Environment of every service besides Redis: InfluxDB, key prefix, settings. */
  env: Record<string, string>;
  /** Called with each process once it is up: registry-sync instances, routers, nginx. */
  onStarted?: (child: ServiceProcess | ManagedProcess) => void | Promise<void>;
  /** Each output line of a process, with its name (`redis-7000`, `router-1`, …). */
  onLine?: (name: string, line: string) => void;
  /** Own process groups, so a terminal's Ctrl-C reaches only the launcher. @default false */
  detached?: boolean;
}

/** What {@link startClusterTopology} started. */
export interface ClusterTopology {
  /** REDIS_CLUSTER_NODES of every service and agent. */
  readonly seeds: string;
  /** The Redis environment of every service and agent (REDIS_CLUSTER_NODES, REDIS_URL). */
  readonly redisEnv: Record<string, string>;
  /** The cluster started here; undefined when `clusterNodes` was given. */
  readonly cluster: LocalCluster | undefined;
  /** Callers' URL: nginx in front of the routers. */
  readonly routerUrl: string;
  /** Agents' URL: nginx in front of the registry-sync instances. */
  readonly registryUrl: string;
  /** In start order; an entry is replaced when {@link restart} starts it again. */
  readonly routers: ServiceProcess[];
  readonly registries: ServiceProcess[];
  readonly nginx: ManagedProcess;
  /** Ports each router and registry-sync listens on, behind nginx. */
  readonly routerPorts: readonly number[];
  readonly registryPorts: readonly number[];
  /** Starts an exited router or registry-sync again on its port. */
  restart(kind: 'router' | 'registry-sync', index: number): Promise<ServiceProcess>;
  /** Stops nginx, the routers, the registry-sync instances, then the cluster. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the topology: the cluster (unless `clusterNodes` is given), the registry-sync instances,
 * the routers (each once it answers `/healthz`), then nginx, which resolves once both fronts
 * answer `/healthz` through it. On a failure, what was started is stopped again.
 */
export async function startClusterTopology(opts: ClusterTopologyOptions): Promise<ClusterTopology> {
  const bins = requireBinaries(opts.clusterNodes ? ['nginx'] : ['redis-server', 'nginx']);
  const started: (ServiceProcess | ManagedProcess)[] = [];
  let cluster: LocalCluster | undefined;
  const stopAll = async () => {
    for (const p of [...started].reverse()) await p.stop('SIGTERM');
    await cluster?.stop();
  };
  try {
    if (!opts.clusterNodes) {
      cluster = await startLocalCluster({
        masters: 3,
        replicasPerMaster: 1,
        dir: join(opts.stateDir, 'cluster'),
        ...(opts.clusterPorts ? { ports: opts.clusterPorts } : {}),
        nodeTimeoutMs: opts.nodeTimeoutMs ?? 2000,
        redisServer: bins['redis-server'],
        ...(opts.detached !== undefined ? { detached: opts.detached } : {}),
        ...(opts.onLine ? { onLine: (port, line) => opts.onLine?.(`redis-${port}`, line) } : {}),
      });
    }
    const seeds = opts.clusterNodes ?? (cluster as LocalCluster).seeds;
    const first = seeds.split(',')[0]?.trim() ?? '';
    // REDIS_URL too: with REDIS_CLUSTER_NODES it gives only the scheme and credentials.
    const redisEnv = { REDIS_CLUSTER_NODES: seeds, REDIS_URL: `redis://${first}` };
    // A task shard per master of the seed's 3-master cluster (docs/PERFORMANCE.md, Task shards);
    // the services trust the X-Forwarded-For of the nginx in front of them (127.0.0.1), so a
    // client limited for failed authentications is that client, not every one behind nginx.
    const env = {
      REACH_TASK_SHARDS: '3',
      REACH_TRUSTED_PROXIES: '127.0.0.1',
      ...opts.env,
      ...redisEnv,
    };

    const startOne = async (kind: 'router' | 'registry-sync', n: number, port: number) => {
      const name = `${kind}-${n + 1}`;
      const portEnv = kind === 'router' ? 'ROUTER_PORT' : 'REGISTRY_PORT';
      const child = await startNodeService({
        name,
        entry: entryOf(kind),
        env: { ...env, [portEnv]: String(port) },
        healthUrl: `http://127.0.0.1:${port}/healthz`,
        timeoutMs: 60_000,
        ...(opts.detached !== undefined ? { detached: opts.detached } : {}),
        ...(opts.onLine ? { onLine: (line: string) => opts.onLine?.(name, line) } : {}),
      });
      started.push(child);
      await opts.onStarted?.(child);
      return child;
    };
    const registries: ServiceProcess[] = [];
    const registryPorts: number[] = [];
    for (let i = 0; i < (opts.registries ?? 2); i++) {
      const { port, started: child } = await onFreePort(`registry-sync-${i + 1}`, (p) =>
        startOne('registry-sync', i, p),
      );
      registries.push(child);
      registryPorts.push(port);
    }
    const routers: ServiceProcess[] = [];
    const routerPorts: number[] = [];
    for (let i = 0; i < (opts.routers ?? 3); i++) {
      const { port, started: child } = await onFreePort(`router-${i + 1}`, (p) =>
        startOne('router', i, p),
      );
      routers.push(child);
      routerPorts.push(port);
    }
    const startNginx = (routerPort: number, registryPort: number) =>
      startLoadBalancer({
        bin: bins.nginx,
        dir: join(opts.stateDir, 'nginx-cluster'),
        fronts: [
          { name: 'routers', port: routerPort, upstreamPorts: routerPorts },
          { name: 'registries', port: registryPort, upstreamPorts: registryPorts },
        ],
        ...(opts.detached !== undefined ? { detached: opts.detached } : {}),
        ...(opts.onLine ? { onLine: (line: string) => opts.onLine?.('nginx-lb', line) } : {}),
      });
    // Ports left to pick are picked now, after every other process of the topology took its own:
    // picked earlier, one could land on a port a node or its cluster bus takes in between.
    const picked = opts.routerPort === undefined || opts.registryPort === undefined;
    let nginx: ManagedProcess | undefined;
    let routerPort = 0;
    let registryPort = 0;
    for (let attempt = 1; nginx === undefined; attempt++) {
      routerPort = opts.routerPort ?? (await freePort());
      registryPort = opts.registryPort ?? (await freePort());
      while (registryPort === routerPort) registryPort = await freePort();
      try {
        nginx = await startNginx(routerPort, registryPort);
      } catch (err: unknown) {
        if (!picked || attempt >= 3 || !portTaken(err)) throw err;
      }
    }
    started.push(nginx);
    await opts.onStarted?.(nginx);

    let stopping: Promise<void> | undefined;
    return {
      seeds,
      redisEnv,
      cluster,
      routerUrl: `http://127.0.0.1:${routerPort}`,
      registryUrl: `http://127.0.0.1:${registryPort}`,
      routers,
      registries,
      nginx,
      routerPorts,
      registryPorts,
      async restart(kind, index) {
        const list = kind === 'router' ? routers : registries;
        const ports = kind === 'router' ? routerPorts : registryPorts;
        const port = ports[index];
        if (port === undefined) throw new Error(`no ${kind} ${index + 1}`);
        const child = await startOne(kind, index, port);
        list[index] = child;
        return child;
      },
      stop: () => (stopping ??= stopAll()),
    };
  } catch (err: unknown) {
    await stopAll();
    throw err;
  }
}
