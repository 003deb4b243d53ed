/**
 * `npm start`: Redis and InfluxDB (given or local, data in `.reach/`), registry-sync, the router
 * and three echo agents, with their output prefixed and readable ({@link StackOutput}; JSON with
 * LOG_FORMAT=json), until Ctrl-C. `npm start -- --cluster` runs the seed's deployment instead
 * ({@link startClusterTopology}): a Redis Cluster (3 masters, a replica each), 2 registry-sync
 * instances and 3 routers behind nginx. Run by src/main.ts, which infra/bootstrap/start.mjs starts
 * once dependencies are installed and the build is up to date.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  httpStatus,
  isPortFree,
  livePidFrom,
  removePid,
  startNodeService,
  stopLeftovers,
  waitFor,
  writePid,
} from '@agent-reach/process-kit';
import { REGISTRY_SETTINGS, ROUTER_SETTINGS, SHARED_SETTINGS } from '@agent-reach/protocol';
import { stackBanner } from './banner.ts';
import { startClusterTopology, type ClusterTopology } from './cluster-topology.ts';
import { entryOf } from './entries.ts';
import { logFormatOf, StackOutput, type LogFormat } from './output.ts';
import { Supervisor, type RestartSpec } from './supervisor.ts';
import { startDataServices, type DataServices } from './stack-data.ts';

/** How {@link launchStack} runs. */
export interface LaunchOptions {
  /** The seed's deployment: a Redis Cluster, 2 registry-sync, 3 routers behind nginx. */
  cluster?: boolean;
}

/** Ports of the Redis Cluster `--cluster` starts (masters first); the bus takes port + 10000. */
const CLUSTER_PORTS = [7000, 7001, 7002, 7003, 7004, 7005];

const AGENTS = ['echo-1', 'echo-2', 'echo-3'];

/**
 * The demo agents' LOG_LEVEL unless one is given: their start and stop lines would follow the
 * banner and push it out of sight. The router and registry-sync log at their default, info.
 */
const AGENT_LOG_LEVEL = 'warn';

async function checkPortFree(port: number, envName: string): Promise<void> {
  if (!(await isPortFree(port)))
    throw new Error(`port ${port} is in use; free it or set ${envName}`);
}

/**
 * An agent key for the demo agents (`POST /v1/keys` with the admin key), passed to them as
 * REACH_KEY: never printed.
 */
async function demoAgentKey(
  routerPort: number,
  adminAuth: Record<string, string>,
): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${routerPort}/v1/keys`, {
    method: 'POST',
    headers: { ...adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({
      tenant: 'default',
      role: 'agent',
      capabilities: ['echo'],
      label: 'npm start demo agents',
    }),
  });
  const body = (await res.json().catch(() => ({}))) as { key?: string; message?: string };
  if (res.status !== 201 || typeof body.key !== 'string')
    throw new Error(`making the demo agents' key failed: ${res.status} ${body.message ?? ''}`);
  return body.key;
}

/** The pid file of a child: `agent echo-1` → `agent-echo-1.pid`. */
const pidName = (name: string) => `${name.replace(/\W+/g, '-')}.pid`;

/** Thrown inside start-up when a stop was requested meanwhile. */
class StopRequested extends Error {}

/** Starts everything and resolves with the exit code for the process once all of it stopped. */
export async function launchStack(root: string, opts: LaunchOptions = {}): Promise<number> {
  const env = process.env;
  let format: LogFormat;
  try {
    format = logFormatOf(env.LOG_FORMAT);
  } catch (err: unknown) {
    process.stderr.write(`npm start: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const out = new StackOutput({ format, colors: Boolean(process.stdout.isTTY) });
  const say = (line: string) => out.say(line);
  const stateDir = join(root, '.reach');
  const runDir = join(stateDir, 'run');
  const lockFile = join(runDir, 'launcher.pid');
  const other = await livePidFrom(lockFile);
  if (other !== undefined && other !== process.pid) {
    say(`another npm start is running (pid ${other}); stop it first`);
    return 1;
  }
  await writePid(lockFile, process.pid, process.argv[1] ?? 'node');
  const stopOrder = [
    'agent',
    'nginx-lb',
    'router',
    'registry-sync',
    'nginx',
    'influxd',
    'redis-server',
    'redis-cluster',
  ];
  await stopLeftovers(runDir, 'launcher.pid', stopOrder, say);

  const registryPort = Number(env.REGISTRY_PORT || REGISTRY_SETTINGS.port.default);
  const routerPort = Number(env.ROUTER_PORT || ROUTER_SETTINGS.port.default);
  const registryUrl = `http://127.0.0.1:${registryPort}`;
  const bucket = env.INFLUX_BUCKET || SHARED_SETTINGS.influxBucket.default;
  // With REACH_AUTH=required the services need keys: the admin key makes the demo agents' key.
  const adminKey = env.REACH_ADMIN_KEY || undefined;
  const keysRequired = env.REACH_AUTH === 'required';
  const adminAuth: Record<string, string> = adminKey ? { authorization: `Bearer ${adminKey}` } : {};

  let state: 'starting' | 'running' | 'stopping' = 'starting';
  let exitCode = 0;
  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
  const stop = (code: number) => {
    if (state === 'stopping') return;
    state = 'stopping';
    exitCode = code;
    requestStop();
  };

  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt === 0) {
      firstSignalAt = Date.now();
      say(`${signal}: stopping everything (Ctrl-C again to force)`);
      stop(0);
    } else if (Date.now() - firstSignalAt > 1000) {
      // npm forwards the terminal's Ctrl-C, so a single keypress can arrive twice at once.
      say('forcing: SIGKILL to everything still running');
      for (const c of children) c.kill('SIGKILL');
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const spawnService = (name: string, spec: RestartSpec) =>
    startNodeService({ name, ...spec, detached: true, onLine: out.lineOf(name) });
  const supervisor = new Supervisor({
    say,
    running: () => state === 'running',
    stopping: () => state === 'stopping',
    stop,
    // With --cluster the others carry on when a router or a registry-sync instance exits: that
    // is what the topology is for.
    survivable: (name) => Boolean(opts.cluster && /^(router|registry-sync)-\d+$/.test(name)),
    spawn: spawnService,
    recordPid: (child, spec) => writePid(join(runDir, pidName(child.name)), child.pid, spec.entry),
  });
  const children = supervisor.children; // in start order; stopped in reverse, agents first
  const untilUp = async (what: string, probe: () => Promise<boolean>, timeoutMs: number) => {
    const r = await waitFor(
      async () => (state !== 'starting' ? 'stop' : (await probe()) ? 'up' : undefined),
      {
        timeoutMs,
        intervalMs: 300,
        message: what,
      },
    );
    if (r === 'stop') throw new StopRequested();
  };
  const service = async (name: string, entry: string, extra: Record<string, string>) => {
    if (state !== 'starting') throw new StopRequested();
    const spec = { entry, env: extra };
    const child = await spawnService(name, spec);
    supervisor.watch(child, spec);
    await writePid(join(runDir, pidName(name)), child.pid, entry);
    say(`${name} started (pid ${child.pid})`);
  };

  let data: DataServices | undefined;
  let topology: ClusterTopology | undefined;
  try {
    // Resolved here so that a missing build is reported like any other start-up failure.
    const entries = {
      'registry-sync': entryOf('registry-sync'),
      router: entryOf('router'),
      agent: entryOf('echo-agent'),
    };
    for (const [what, file] of Object.entries(entries)) {
      if (!existsSync(file)) throw new Error(`the ${what} entry ${file} does not exist`);
    }
    if (keysRequired && !adminKey) {
      throw new Error(
        'REACH_AUTH=required needs REACH_ADMIN_KEY (32+ random characters, e.g. REACH_ADMIN_KEY=$(openssl rand -hex 32)): the demo agents get their key with it',
      );
    }
    await checkPortFree(registryPort, 'REGISTRY_PORT');
    await checkPortFree(routerPort, 'ROUTER_PORT');
    const clusterNodes = env.REDIS_CLUSTER_NODES || undefined;
    if (opts.cluster && !clusterNodes) {
      for (const port of CLUSTER_PORTS) {
        await checkPortFree(port, 'REDIS_CLUSTER_NODES to a cluster you run');
        await checkPortFree(port + 10_000, 'REDIS_CLUSTER_NODES to a cluster you run');
      }
    }
    data = await startDataServices({
      stateDir,
      // Given a cluster, or starting one, the launcher starts no standalone Redis.
      noRedis: Boolean(opts.cluster || clusterNodes),
      redisUrl: env.REDIS_URL || undefined,
      influxUrl: env.INFLUX_URL || undefined,
      influxV2Url: env.INFLUX_V2_URL || undefined,
      bucket,
      log: say,
      onLine: (name, line) => out.lineOf(name)(line),
    });
    for (const p of data.procs) supervisor.watch(p);
    // A cluster given: every process connects to it (REDIS_URL then gives only scheme and
    // credentials).
    const given: Record<string, string> = clusterNodes
      ? {
          REDIS_CLUSTER_NODES: clusterNodes,
          REDIS_URL: env.REDIS_URL || `redis://${clusterNodes.split(',')[0]?.trim() ?? ''}`,
        }
      : {};
    const common: Record<string, string> = {
      ...(data.redisUrl ? { REDIS_URL: data.redisUrl } : {}),
      ...given,
      INFLUX_URL: data.influxUrl,
      INFLUX_V2_URL: data.influxV2Url,
      INFLUX_BUCKET: bucket,
      REACH_PREFIX: env.REACH_PREFIX || SHARED_SETTINGS.prefix.default,
      REGISTRY_PORT: String(registryPort),
      ROUTER_PORT: String(routerPort),
    };
    const healthy = (url: string) => async () => (await httpStatus(url)) === 200;
    if (opts.cluster) {
      say(
        clusterNodes
          ? `using the Redis Cluster at ${clusterNodes}`
          : `starting a Redis Cluster on ports ${CLUSTER_PORTS.join(', ')} (3 masters, a replica each)`,
      );
      topology = await startClusterTopology({
        stateDir,
        ...(clusterNodes ? { clusterNodes } : { clusterPorts: CLUSTER_PORTS }),
        routerPort,
        registryPort,
        env: common,
        detached: true,
        onLine: (name, line) => out.lineOf(name)(line),
        onStarted: async (child) => {
          if (state !== 'starting') throw new StopRequested();
          supervisor.watch(child);
          await writePid(join(runDir, pidName(child.name)), child.pid, child.name);
          say(`${child.name} started (pid ${child.pid})`);
        },
      });
      for (const node of topology.cluster?.nodes ?? []) {
        await writePid(join(runDir, `redis-cluster-${node.port}.pid`), node.pid, 'redis-server');
      }
      Object.assign(common, topology.redisEnv);
    } else {
      await service('registry-sync', entries['registry-sync'], common);
      await untilUp(
        `registry-sync answering ${registryUrl}/healthz`,
        healthy(`${registryUrl}/healthz`),
        60_000,
      );
      // The router answers /healthz with 200 once it holds registry-sync's first snapshot.
      await service('router', entries.router, common);
      const routerHealth = `http://127.0.0.1:${routerPort}/healthz`;
      await untilUp(`router answering ${routerHealth}`, healthy(routerHealth), 60_000);
    }
    const agentKey = keysRequired ? await demoAgentKey(routerPort, adminAuth) : undefined;
    for (const id of AGENTS) {
      await service(`agent ${id}`, entries.agent, {
        ...common,
        REACH_AGENT_ID: id,
        REACH_REGISTRY_URL: registryUrl,
        LOG_LEVEL: env.LOG_LEVEL || AGENT_LOG_LEVEL,
        ...(agentKey === undefined ? {} : { REACH_KEY: agentKey }),
        // The agents hold their own key only, never the operator's.
        REACH_ADMIN_KEY: '',
      });
    }
    const listed = async () => {
      const body = await (await fetch(`${registryUrl}/v1/agents`, { headers: adminAuth })).text();
      return AGENTS.every((id) => body.includes(`"${id}"`));
    };
    const registered = await untilUp('agents registered', listed, 30_000).then(
      () => true,
      (err: unknown) => (err instanceof StopRequested ? Promise.reject(err) : false),
    );
    say(
      registered
        ? `agents ${AGENTS.join(', ')} registered`
        : 'agents not listed by registry-sync yet: see their output',
    );
    // The banner comes last and stays at the bottom of the terminal: after the lines the
    // processes print as they settle, with the agents quiet and tasks logged at debug.
    await out.settled(300, 2_000);
    if (state === 'starting') {
      state = 'running';
      const redis = topology
        ? `cluster ${topology.seeds}${topology.cluster ? ` (3 masters, a replica each; data in ${topology.cluster.dir})` : ''}`
        : clusterNodes
          ? `cluster ${clusterNodes}`
          : (data.redisUrl ?? '').replace(/^(\w+:\/\/[^:/@]*:)[^@/]*@/, '$1***@');
      out.banner(
        stackBanner({
          routerPort,
          registryUrl,
          redis,
          topology,
          data,
          bucket,
          agents: AGENTS,
          keys: keysRequired,
        }),
      );
    }
  } catch (err: unknown) {
    if (!(err instanceof StopRequested)) {
      say(`failed to start: ${err instanceof Error ? err.message : String(err)}`);
    }
    stop(1);
  }

  await stopRequested;
  await supervisor.settled();
  const agents = children.filter((c) => c.name.startsWith('agent '));
  await Promise.all(agents.map((c) => c.stop('SIGTERM')));
  for (const c of [...children].reverse()) if (!agents.includes(c)) await c.stop('SIGTERM');
  await topology?.stop();
  for (const node of topology?.cluster?.nodes ?? [])
    await removePid(join(runDir, `redis-cluster-${node.port}.pid`));
  await data?.clearPids();
  for (const c of children) await removePid(join(runDir, pidName(c.name)));
  await removePid(lockFile);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  say(exitCode === 0 ? 'all stopped' : `all stopped; exit code ${exitCode}`);
  return exitCode;
}
