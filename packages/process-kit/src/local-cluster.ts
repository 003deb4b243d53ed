import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { findBinary } from './binaries.ts';
import { isPortFree, portTaken, redisPing } from './net.ts';
import { spawnManaged, type ManagedProcess } from './proc.ts';
import { awaitReady } from './ready.ts';
import { waitFor } from './wait.ts';

const run = promisify(execFile);

/** Where a node stands in the cluster. */
export type ClusterRole = 'master' | 'replica';

/** One `redis-server` of a {@link LocalCluster}. */
export interface ClusterNode {
  host: string;
  port: number;
  /** As the cluster last reported it (see {@link LocalCluster.topology}). */
  role: ClusterRole;
  /** The process now serving this port; it changes when the node is restarted. */
  pid: number;
}

/** A node as `CLUSTER NODES` reports it. */
export interface ClusterNodeState {
  host: string;
  port: number;
  role: ClusterRole;
  /** The node's cluster id. */
  id: string;
  /** A replica's master id; `undefined` for a master. */
  masterId?: string;
  /** Flagged `fail` (or `fail?`) by the node asked. */
  failing: boolean;
  /** Slot ranges held (masters), e.g. `[[0, 5460]]`. */
  slots: Array<[number, number]>;
}

/** A Redis Cluster of local processes, started by {@link startLocalCluster}. */
export interface LocalCluster {
  /** Every node, masters first, in start order. */
  readonly nodes: readonly ClusterNode[];
  /** Seed list for `REDIS_CLUSTER_NODES`: `127.0.0.1:port,…`, the masters first. */
  readonly seeds: string;
  /** Folder holding each node's `node-<port>/` (nodes.conf, AOF). */
  readonly dir: string;
  /**
   * Asks a live node for `CLUSTER NODES`, updates each node's `role` in {@link nodes} and
   * returns the whole view.
   */
  topology(): Promise<ClusterNodeState[]>;
  /** SIGKILLs the node on `port` and resolves once it has exited. */
  killNode(port: number): Promise<void>;
  /**
   * Starts the node on `port` again from its folder (same nodes.conf, same AOF) and resolves once
   * it answers PING; it rejoins the cluster by itself (a killed master whose replica took over
   * comes back as a replica).
   */
  restartNode(port: number): Promise<void>;
  /** Stops every node (SIGTERM, then SIGKILL after 5 s) and removes a temp folder it made. Idempotent. */
  stop(): Promise<void>;
}

/** Options for {@link startLocalCluster}. */
export interface LocalClusterOptions {
  /** @default 3 (the least Redis Cluster accepts) */
  masters?: number;
  /** Replicas of each master. @default 0 */
  replicasPerMaster?: number;
  /**
   * `cluster-node-timeout`: how long a master may be unreachable before its replica takes over.
   * @default 2000 (so failover tests are quick; Redis' own default is 15000)
   */
  nodeTimeoutMs?: number;
  /**
   * Folder for the nodes' data. When given it is kept, and a cluster already formed there on the
   * same `ports` is started again rather than created. @default a new temp folder, removed by stop()
   */
  dir?: string;
  /** Ports, masters first; each needs `port + 10000` free too (the cluster bus). @default free ports */
  ports?: readonly number[];
  /** Path of `redis-server`. @default found on PATH */
  redisServer?: string;
  /** Path of `redis-cli`. @default found on PATH */
  redisCli?: string;
  /** Deadline for the whole start. @default 30000 */
  timeoutMs?: number;
  /** Each output line of each node, e.g. to echo it. */
  onLine?: (port: number, line: string) => void;
  /** Own process groups (see {@link spawnManaged}). @default false */
  detached?: boolean;
}

const HOST = '127.0.0.1';
/** The cluster bus listens on the data port + 10000; keep both below the ephemeral range. */
const BUS_OFFSET = 10_000;
const PORT_LOW = 20_000;
const PORT_HIGH = 32_768 - BUS_OFFSET;

/** A port whose bus port (+10000) is free as well, not in `taken`. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = PORT_LOW + randomInt(PORT_HIGH - PORT_LOW);
    if (taken.has(port)) continue;
    if ((await isPortFree(port)) && (await isPortFree(port + BUS_OFFSET))) return port;
  }
  throw new Error('no free port pair (port and port+10000) for a cluster node');
}

/** Runs `redis-cli` and returns its stdout; throws with its output on failure. */
async function cli(bin: string, args: readonly string[], timeoutMs = 10_000): Promise<string> {
  try {
    const { stdout } = await run(bin, [...args], { timeout: timeoutMs, encoding: 'utf8' });
    return stdout;
  } catch (err: unknown) {
    const e = err as { stdout?: string; stderr?: string; message?: string };
    throw new Error(
      `redis-cli ${args.join(' ')} failed: ${e.message ?? String(err)}\n${e.stdout ?? ''}${e.stderr ?? ''}`,
      { cause: err },
    );
  }
}

/** `CLUSTER INFO` of one node as a field map. */
async function clusterInfo(bin: string, port: number): Promise<Record<string, string>> {
  const text = await cli(bin, ['-h', HOST, '-p', String(port), 'CLUSTER', 'INFO'], 3000);
  const info: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) info[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return info;
}

/** Parses `CLUSTER NODES` output. */
export function parseClusterNodes(text: string): ClusterNodeState[] {
  const out: ClusterNodeState[] = [];
  for (const line of text.split(/\r?\n/)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const [id, addr, flags, master] = f as [string, string, string, string];
    const hostPort = addr.split('@')[0] ?? '';
    const colon = hostPort.lastIndexOf(':');
    const flagSet = new Set(flags.split(','));
    const slots: Array<[number, number]> = [];
    for (const s of f.slice(8)) {
      if (s.startsWith('[')) continue; // a slot being migrated
      const [a, b] = s.split('-');
      slots.push([Number(a), Number(b ?? a)]);
    }
    out.push({
      id,
      host: hostPort.slice(0, colon),
      port: Number(hostPort.slice(colon + 1)),
      role: flagSet.has('master') ? 'master' : 'replica',
      ...(master !== '-' ? { masterId: master } : {}),
      failing: flagSet.has('fail') || flagSet.has('fail?'),
      slots,
    });
  }
  return out;
}

function nodeArgs(port: number, dir: string, nodeTimeoutMs: number): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    '',
    '--save',
    '',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
    '--enable-debug-command',
    'local',
  ];
}

/**
 * Starts a Redis Cluster of `masters` × (1 + `replicasPerMaster`) local `redis-server` processes
 * (cluster-enabled, AOF with `appendfsync always`, DEBUG for local clients) on free 127.0.0.1
 * ports, joins them with `redis-cli --cluster create`, and resolves once every node reports
 * `cluster_state:ok`, the first node sees each master with its replicas, and every replica's
 * link to its master is up.
 *
 * @throws {Error} naming the binary when `redis-server` or `redis-cli` is missing, or with the
 *   failing node's output when a node exits or the cluster is not ok by the deadline; nothing it
 *   started is left running.
 */
export async function startLocalCluster(opts: LocalClusterOptions = {}): Promise<LocalCluster> {
  const masters = opts.masters ?? 3;
  const replicas = opts.replicasPerMaster ?? 0;
  const total = masters * (1 + replicas);
  if (masters < 3) throw new Error(`a Redis Cluster needs at least 3 masters, not ${masters}`);
  if (opts.ports && opts.ports.length !== total) {
    throw new Error(
      `ports: ${total} needed (${masters} masters × ${1 + replicas}), got ${opts.ports.length}`,
    );
  }
  const server = opts.redisServer ?? findBinary('redis-server');
  if (!server)
    throw new Error('redis-server not found on PATH; install it: apt-get install redis-server');
  const redisCli = opts.redisCli ?? findBinary('redis-cli');
  if (!redisCli)
    throw new Error('redis-cli not found on PATH; install it: apt-get install redis-tools');
  const ownDir = opts.dir === undefined;
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'reach-cluster-')));
  const nodeTimeoutMs = opts.nodeTimeoutMs ?? 2000;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const left = () => Math.max(1000, deadline - Date.now());

  const procs = new Map<number, ManagedProcess>();
  const nodes: ClusterNode[] = [];

  const launch = async (port: number): Promise<ManagedProcess> => {
    const nodeDir = join(dir, `node-${port}`);
    await mkdir(nodeDir, { recursive: true });
    const proc = await spawnManaged({
      name: `redis-cluster-${port}`,
      command: server,
      args: nodeArgs(port, nodeDir, nodeTimeoutMs),
      cwd: nodeDir,
      ...(opts.onLine ? { onLine: (line: string) => opts.onLine?.(port, line) } : {}),
      ...(opts.detached !== undefined ? { detached: opts.detached } : {}),
    });
    try {
      await awaitReady(proc, `answering PING on ${HOST}:${port}`, () => redisPing(port), left());
    } catch (err: unknown) {
      await proc.stop('SIGKILL');
      throw err;
    }
    procs.set(port, proc);
    return proc;
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await Promise.all([...procs.values()].map((p) => p.stop('SIGTERM', 5000)));
      if (ownDir) await rm(dir, { recursive: true, force: true });
    })());

  try {
    const taken = new Set<number>();
    for (let i = 0; i < total; i++) {
      const wanted = opts.ports?.[i];
      for (let attempt = 1; ; attempt++) {
        const port = wanted ?? (await freeClusterPort(taken));
        try {
          const proc = await launch(port);
          taken.add(port);
          nodes.push({ host: HOST, port, role: i < masters ? 'master' : 'replica', pid: proc.pid });
          break;
        } catch (err: unknown) {
          if (wanted !== undefined || attempt >= 3 || !portTaken(err)) throw err;
        }
      }
    }
    const ports = nodes.map((n) => n.port);
    const first = ports[0] as number;
    const formed = Number((await clusterInfo(redisCli, first)).cluster_known_nodes ?? '1') > 1;
    if (!formed) {
      await cli(
        redisCli,
        [
          '--cluster',
          'create',
          ...ports.map((p) => `${HOST}:${p}`),
          '--cluster-replicas',
          String(replicas),
          '--cluster-yes',
        ],
        left(),
      );
    }
    await waitFor(
      async () => {
        for (const port of ports) {
          const info = await clusterInfo(redisCli, port);
          if (info.cluster_state !== 'ok' || Number(info.cluster_known_nodes) !== total)
            return false;
        }
        const view = parseClusterNodes(
          await cli(redisCli, ['-h', HOST, '-p', String(first), 'CLUSTER', 'NODES'], 3000),
        );
        // The view is gossip: a replica shows as one only once its REPLICATE has spread.
        const replicaNodes = view.filter((v) => v.role === 'replica');
        const masterNodes = view.filter((v) => v.role === 'master');
        if (masterNodes.length !== masters || replicaNodes.length !== masters * replicas)
          return false;
        for (const m of masterNodes)
          if (replicaNodes.filter((r) => r.masterId === m.id).length !== replicas) return false;
        for (const n of replicaNodes) {
          const repl = await cli(
            redisCli,
            ['-h', HOST, '-p', String(n.port), 'INFO', 'replication'],
            3000,
          );
          if (!/master_link_status:up/.test(repl)) return false;
        }
        return true;
      },
      {
        timeoutMs: left(),
        intervalMs: 100,
        message: `Redis Cluster on ports ${ports.join(',')}: cluster_state:ok on every node`,
      },
    );
  } catch (err: unknown) {
    await stop();
    throw err;
  }

  const topology = async (): Promise<ClusterNodeState[]> => {
    let lastErr: unknown;
    for (const n of nodes) {
      const proc = procs.get(n.port);
      if (!proc || proc.hasExited()) continue;
      try {
        const view = parseClusterNodes(
          await cli(redisCli, ['-h', HOST, '-p', String(n.port), 'CLUSTER', 'NODES'], 3000),
        );
        for (const v of view) {
          const node = nodes.find((x) => x.port === v.port);
          if (node) node.role = v.role;
        }
        return view;
      } catch (err: unknown) {
        lastErr = err;
      }
    }
    throw new Error('no live cluster node answered CLUSTER NODES', { cause: lastErr });
  };

  const nodeOn = (port: number): ClusterNode => {
    const node = nodes.find((n) => n.port === port);
    if (!node)
      throw new Error(
        `no cluster node on port ${port} (ports: ${nodes.map((n) => n.port).join(',')})`,
      );
    return node;
  };

  return {
    nodes,
    seeds: nodes.map((n) => `${n.host}:${n.port}`).join(','),
    dir,
    topology,
    async killNode(port) {
      nodeOn(port);
      await procs.get(port)?.stop('SIGKILL');
    },
    async restartNode(port) {
      const node = nodeOn(port);
      if (stopping) throw new Error('cluster stopped');
      const proc = procs.get(port);
      if (proc && !proc.hasExited()) throw new Error(`cluster node ${port} is still running`);
      node.pid = (await launch(port)).pid;
    },
    stop,
  };
}
