/**
 * `npm start`: Redis and InfluxDB (given or local, data in `.reach/`), registry-sync, the router,
 * three echo agents, and three endpoint agents — demo A2A, HTTP and MCP servers declared by URL
 * ({@link DEMO_ENDPOINTS}) and served by a relay — with their output prefixed and readable
 * ({@link StackOutput}; JSON with LOG_FORMAT=json), until Ctrl-C. `npm start -- --cluster` runs
 * the seed's deployment instead ({@link startClusterTopology}): a Redis Cluster (3 masters, a
 * replica each), 2 registry-sync instances and 3 routers behind nginx, and two relays. Run by
 * src/main.ts, which infra/bootstrap/start.mjs starts once dependencies are installed and the
 * build is up to date.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  httpStatus,
  isPortFree,
  livePidFrom,
  nodeArgsFor,
  removePid,
  spawnManaged,
  startNodeService,
  stopLeftovers,
  waitFor,
  writePid,
} from '@agent-reach/process-kit';
import {
  REGISTRY_SETTINGS,
  RELAY_SETTINGS,
  ROUTER_SETTINGS,
  SHARED_SETTINGS,
} from '@agent-reach/protocol';
import { stackBanner } from './banner.ts';
import { startClusterTopology, type ClusterTopology } from './cluster-topology.ts';
import {
  declareDemoEndpoints,
  DEFAULT_ENDPOINT_PORTS,
  DEMO_ENDPOINTS,
  endpointArgs,
  endpointBaseUrl,
  readableDemoLine,
  type EndpointPorts,
} from './demo-endpoints.ts';
import { demoKey } from './demo-keys.ts';
import { entryOf } from './entries.ts';
import { logFormatOf, StackOutput, type LogFormat } from './output.ts';
import { Supervisor, type Child, type RestartSpec } from './supervisor.ts';
import { startDataServices, type DataServices } from './stack-data.ts';

/** How {@link launchStack} runs. */
export interface LaunchOptions {
  /** The seed's deployment: a Redis Cluster, 2 registry-sync, 3 routers behind nginx, 2 relays. */
  cluster?: boolean;
  /** Ports of the demo endpoint agents. @default {@link DEFAULT_ENDPOINT_PORTS} (8091–8093) */
  endpointPorts?: EndpointPorts;
}

/** Ports of the Redis Cluster `--cluster` starts (masters first); the bus takes port + 10000. */
const CLUSTER_PORTS = [7000, 7001, 7002, 7003, 7004, 7005];

const AGENTS = ['echo-1', 'echo-2', 'echo-3'];
const ENDPOINT_AGENTS = DEMO_ENDPOINTS.map((e) => e.agentId);

/**
 * The demo agents' LOG_LEVEL unless one is given: their start and stop lines would follow the
 * banner and push it out of sight. The router and registry-sync log at their default, info.
 */
const AGENT_LOG_LEVEL = 'warn';

/** `fix` says what to do about it: `free it or set ROUTER_PORT`. */
async function checkPortFree(port: number, fix: string): Promise<void> {
  if (!(await isPortFree(port))) throw new Error(`port ${port} is in use; ${fix}`);
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
    'relay',
    'demo-',
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
  const relayPort = Number(env.RELAY_PORT || RELAY_SETTINGS.port.default);
  // One relay, or two with --cluster (any relay serves any endpoint agent: they share them out).
  const relayPorts = opts.cluster ? [relayPort, relayPort + 1] : [relayPort];
  const endpointPorts = opts.endpointPorts ?? DEFAULT_ENDPOINT_PORTS;
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

  const spawnService = (name: string, spec: RestartSpec): Promise<Child> => {
    if (!spec.args)
      return startNodeService({ name, ...spec, detached: true, onLine: out.lineOf(name) });
    // A demo endpoint: started with its arguments, its JSON lines turned into sentences.
    const print = out.lineOf(name);
    return spawnManaged({
      name,
      command: process.execPath,
      args: [...nodeArgsFor(spec.entry), ...spec.args],
      env: { ...process.env, ...spec.env },
      detached: true,
      onLine: (line) => print(readableDemoLine(line)),
    });
  };
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
  const service = async (
    name: string,
    entry: string,
    extra: Record<string, string>,
    args?: readonly string[],
  ) => {
    if (state !== 'starting') throw new StopRequested();
    const spec: RestartSpec = { entry, env: extra, ...(args ? { args } : {}) };
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
      relay: entryOf('relay'),
      'endpoint-demo': entryOf('endpoint-demo'),
    };
    for (const [what, file] of Object.entries(entries)) {
      if (!existsSync(file)) throw new Error(`the ${what} entry ${file} does not exist`);
    }
    if (keysRequired && !adminKey) {
      throw new Error(
        'REACH_AUTH=required needs REACH_ADMIN_KEY (32+ random characters, e.g. REACH_ADMIN_KEY=$(openssl rand -hex 32)): the demo agents get their key with it',
      );
    }
    await checkPortFree(registryPort, 'free it or set REGISTRY_PORT');
    await checkPortFree(routerPort, 'free it or set ROUTER_PORT');
    for (const port of relayPorts)
      await checkPortFree(
        port,
        `free it or set RELAY_PORT${opts.cluster ? ' (the relays take it and the next)' : ''}`,
      );
    for (const e of DEMO_ENDPOINTS)
      await checkPortFree(
        endpointPorts[e.kind],
        `the demo endpoint agent ${e.agentId} listens there: free it`,
      );
    const clusterNodes = env.REDIS_CLUSTER_NODES || undefined;
    if (opts.cluster && !clusterNodes) {
      for (const port of CLUSTER_PORTS) {
        const fix = 'free it or set REDIS_CLUSTER_NODES to a cluster you run';
        await checkPortFree(port, fix);
        await checkPortFree(port + 10_000, fix);
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
      // Where the router sends the console's drain and serve calls (nginx with --cluster).
      REACH_REGISTRY_URL: registryUrl,
      // The demo endpoint agents listen on 127.0.0.1: with keys required a loopback URL is
      // allowed only by name (REACH_OUTBOUND_LOOPBACK, docs/SECURITY.md).
      ...(keysRequired
        ? {
            REACH_ENDPOINT_HOSTS: [env.REACH_ENDPOINT_HOSTS, '127.0.0.1']
              .filter((h) => h !== undefined && h !== '')
              .join(','),
          }
        : {}),
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
    const agentKey = keysRequired
      ? await demoKey(routerPort, adminAuth, {
          role: 'agent',
          capabilities: ['echo'],
          label: 'npm start demo agents',
        })
      : undefined;
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
    // The endpoint agents: the demo servers first, then their declarations, then the relays
    // that register them and make the calls.
    for (const e of DEMO_ENDPOINTS) {
      await service(
        e.agentId,
        entries['endpoint-demo'],
        { LOG_LEVEL: env.LOG_LEVEL || AGENT_LOG_LEVEL, REACH_ADMIN_KEY: '' },
        endpointArgs(e, endpointPorts[e.kind]),
      );
    }
    await Promise.all(
      DEMO_ENDPOINTS.map(async (e) => {
        // Any HTTP answer will do: each of them has its own paths.
        const base = endpointBaseUrl(endpointPorts[e.kind]);
        const answers = async () => (await httpStatus(base)) !== undefined;
        return untilUp(`${e.agentId} answering ${base}`, answers, 30_000);
      }),
    );
    await declareDemoEndpoints(registryUrl, adminAuth, endpointPorts);
    say(`endpoint agents ${ENDPOINT_AGENTS.join(', ')} declared on registry-sync`);
    const relayKey = keysRequired
      ? await demoKey(routerPort, adminAuth, { role: 'relay', label: 'npm start relays' })
      : undefined;
    for (const [i, port] of relayPorts.entries()) {
      const name = relayPorts.length > 1 ? `relay-${i + 1}` : 'relay';
      await service(name, entries.relay, {
        ...common,
        RELAY_PORT: String(port),
        REACH_RELAY_REGISTRY_URL: registryUrl,
        ...(relayKey === undefined ? {} : { REACH_RELAY_KEY: relayKey }),
        REACH_ADMIN_KEY: '',
      });
      const relayHealth = `http://127.0.0.1:${port}/healthz`;
      await untilUp(`${name} answering ${relayHealth}`, healthy(relayHealth), 60_000);
    }
    const listed = async () => {
      const body = await (await fetch(`${registryUrl}/v1/agents`, { headers: adminAuth })).text();
      return [...AGENTS, ...ENDPOINT_AGENTS].every((id) => body.includes(`"${id}"`));
    };
    const registered = await untilUp('agents registered', listed, 30_000).then(
      () => true,
      (err: unknown) => (err instanceof StopRequested ? Promise.reject(err) : false),
    );
    say(
      registered
        ? `agents ${AGENTS.join(', ')} and endpoint agents ${ENDPOINT_AGENTS.join(', ')} registered`
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
          relayPorts,
          endpointPorts,
          // A new message each start: one sent again is answered with the task it made before.
          a2aMessageId: `try-a2a-${Date.now().toString(36)}`,
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
  // The agents and the relays first, together (a relay lets its calls finish and deregisters its
  // endpoint agents), then the endpoints they called, then the rest in reverse start order.
  const isEndpoint = (c: Child) => ENDPOINT_AGENTS.includes(c.name);
  const first = children.filter(
    (c) => c.name.startsWith('agent ') || /^relay(-\d+)?$/.test(c.name),
  );
  await Promise.all(first.map((c) => c.stop('SIGTERM')));
  await Promise.all(children.filter(isEndpoint).map((c) => c.stop('SIGTERM')));
  for (const c of [...children].reverse())
    if (!first.includes(c) && !isEndpoint(c)) await c.stop('SIGTERM');
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
