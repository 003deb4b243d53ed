import type { Mode } from './load/protocol.ts';
import type { ServiceBuild, ServiceBuildChoice } from './stack/service-build.ts';

/**
 * The systems compared. `reach-auth` is Agent-Reach with API keys required (REACH_AUTH=required,
 * a caller key and an agent key), run only when named: `--only reach,reach-auth` measures what
 * auth costs per request against the same system without it.
 */
export const SYSTEMS = ['reach', 'bullmq', 'floor', 'reach-auth'] as const;

/**
 * The systems of `--topology cluster`, all Agent-Reach with the same fleet: on one Redis with one
 * router, on a 3-master Redis Cluster with one router, and on that cluster with 3 routers behind
 * nginx.
 */
export const TOPOLOGY_SYSTEMS = ['one-redis', 'cluster', 'cluster-3r'] as const;
export type TopologySystemName = (typeof TOPOLOGY_SYSTEMS)[number];

/**
 * The systems of `--modes relay`, the same no-op work three ways: a worker-sdk agent (`reach`),
 * a relay calling the demo HTTP endpoint (`relay-http`), and a relay calling the demo A2A server
 * (`relay-a2a`), each endpoint server a process of its own. `--modes relay-fleet` runs
 * `relay-http` alone with {@link BenchOptions.agents} endpoint agents on one relay.
 */
export const RELAY_SYSTEMS = ['reach', 'relay-http', 'relay-a2a'] as const;
export type RelaySystemName = (typeof RELAY_SYSTEMS)[number];

/**
 * The systems of `--modes router-only`: Agent-Reach's router alone on a core, fed by a stub agent
 * (`router`), and the least a fastify service taking the same submissions can do (`router-floor`:
 * the same body parsed and validated, one XADD per task), on the same core.
 */
export const ROUTER_ONLY_SYSTEMS = ['router', 'router-floor'] as const;
export type RouterOnlySystemName = (typeof ROUTER_ONLY_SYSTEMS)[number];
export type SystemName =
  (typeof SYSTEMS)[number] | TopologySystemName | RelaySystemName | RouterOnlySystemName;

/** What `--modes` takes: the three load modes, or one of the runs that go alone. */
export const MODE_NAMES = [
  'flood',
  'paced',
  'http',
  'relay',
  'relay-fleet',
  'router-only',
  'fairness',
  'fleet',
] as const;

/** The `--modes` that run alone, each with defaults of its own. */
const ALONE_MODES = ['relay', 'relay-fleet', 'router-only', 'fairness', 'fleet'] as const;

/** Settings of one bench session; {@link parseArgs} fills them from the command line. */
export interface BenchOptions {
  /** Fewer tasks and one repetition: finishes within a minute (CI smoke). */
  quick: boolean;
  /** Run the routing microbenchmark instead of the end-to-end session. */
  routing: boolean;
  /**
   * `cluster`: Agent-Reach's flood on one Redis against a 3-master Redis Cluster, and one router
   * against 3 behind nginx ({@link TOPOLOGY_SYSTEMS}), with a fleet of {@link agents} agents.
   * @default undefined (the comparison with BullMQ and the floor)
   */
  topology?: 'cluster';
  /**
   * `compare` (`--modes relay`): the SDK agent against a relay with an HTTP and one with an A2A
   * endpoint, a flood and a paced run each ({@link RELAY_SYSTEMS}). `fleet` (`--modes
   * relay-fleet`): one relay serving {@link agents} HTTP endpoint agents, idle then under a paced
   * load. @default undefined
   */
  relay?: 'compare' | 'fleet';
  /**
   * `--modes router-only`: floods of the router pinned to CPU 0 (`taskset`), everything else on
   * CPU 1, against a fastify floor on CPU 0 ({@link ROUTER_ONLY_SYSTEMS}). @default false
   */
  routerOnly: boolean;
  /**
   * `--modes fairness` (issue 30): the noisy neighbour on the waiting room, Jain's index over
   * equal tenants, slots busy under backlog, and the noisy neighbour on BullMQ
   * (`fairness/settings.ts`: `--workers` agents of `--concurrency` slots, B at `--rates`).
   * @default false
   */
  fairness: boolean;
  /**
   * `--modes fleet`: the control plane at fleet size, simulated agents several hundred to a
   * process, at each of {@link fleetSizes} (`fleet/run.ts`). @default false
   */
  fleet: boolean;
  /**
   * `--modes fleet`'s sizes (`--agents 1000,3000,10000`). @default [1000, 3000, 10000] (quick: [200])
   */
  fleetSizes: number[];
  /**
   * Start the router with node's `--trace-gc` and report its GC pauses during each measured run
   * (the comparison's `reach` and `reach-auth`, and `--modes router-only`). @default false
   */
  traceGc: boolean;
  /**
   * Agents of the `--topology` fleet, spread over the processes in {@link workers}; endpoint
   * agents of `--modes relay-fleet`. @default 30 (relay-fleet: 1000)
   */
  agents: number;
  /**
   * `--modes relay-fleet`, `fleet`: how long the idle fleet is measured, ms (`fleet`: in each
   * heartbeat mode). @default 20000 (quick: 8000; fleet: 30000, quick 8000)
   */
  idleMs: number;
  /** Capabilities the `--topology` fleet serves, agent i serving capability i mod this. @default 3 */
  capabilities: number;
  /** Routers behind nginx in the `cluster-3r` system. @default 3 */
  routers: number;
  /** REACH_SHARDS of every `--topology` system: shards of the acks stream and the due set. @default 1 */
  shards: number;
  /**
   * CPU-profile the router, registry-sync and agents during one Agent-Reach run (`--modes fleet`:
   * registry-sync and the router over each whole size) (flood unless
   * --modes says; with `--modes router-only`, one flood of the pinned router), then summarise.
   */
  profile: boolean;
  /** Interleaved repetitions; figures are their medians. @default 3 (quick: 1) */
  reps: number;
  /** Tasks per flood run. @default 20000 (quick: 2000) */
  floodTasks: number;
  /** Tasks outstanding at once in a flood (submitted, no result yet). @default 128 */
  floodWindow: number;
  /** Open-loop rates of the paced runs, tasks/s. @default [200, 2000, 4000] */
  pacedRates: number[];
  /** Length of each paced run, ms. @default 4000 (quick: 500) */
  pacedMs: number;
  /** Length of each http run, ms. @default 5000 (quick: 1500) */
  httpMs: number;
  /** Concurrent request-per-task clients in the http runs. @default 50 */
  httpConnections: number;
  /** Worker processes per system: agents, BullMQ workers, floor consumers (`--topology`: processes the agents are spread over). @default 2 (--topology: 3) */
  workers: number;
  /** Tasks each worker runs at once: max_concurrency, BullMQ concurrency. @default 100 */
  concurrency: number;
  /** Tasks each system runs before the measured runs (JIT warm-up). @default 3000 (quick: 300) */
  warmupTasks: number;
  /** Systems to run. @default reach, bullmq, floor */
  systems: SystemName[];
  /** Modes to run. @default all */
  modes: Mode[];
  /** LOG_LEVEL of the router, registry-sync and agents. @default 'warn' */
  serviceLogLevel: string;
  /** Echo every child's output. @default false */
  verbose: boolean;
  /** How long a paced or http run waits for its last results; also bounds the wait for Redis to go quiet between runs. @default 20000 (quick: 4000) */
  drainMs: number;
  /** The whole session is stopped after this long. @default 25 min (quick: 100 s; --topology: 10 min, quick 150 s) */
  deadlineMs: number;
  /** Which build of the router and registry-sync to run (stack/service-build.ts). @default 'auto' */
  from: ServiceBuildChoice;
  /** The build `from` settled on; main sets it before anything starts. @default 'src' */
  build: ServiceBuild;
}

const HELP = `usage: npm run bench -- [--quick] [--routing] [--profile] [--trace-gc] [--reps N] [--tasks N] [--window N]
       [--workers N] [--concurrency N] [--http-ms MS] [--paced-ms MS] [--rates 200,2000,4000]
       [--only reach,bullmq,floor,reach-auth] [--modes flood,paced,http] [--log-level warn] [--verbose]
       [--from auto|dist|src]
       npm run bench -- --modes router-only [--quick] [--profile] [--trace-gc] [--only router,router-floor]
       [--reps N] [--tasks N] [--window N] [--workers N] [--concurrency N]
       npm run bench -- --modes relay [--quick] [--only reach,relay-http,relay-a2a] [--reps N]
       [--tasks N] [--window N] [--rates 200] [--paced-ms MS] [--workers N] [--concurrency N]
       npm run bench -- --modes relay-fleet [--quick] [--agents 1000] [--idle-ms MS] [--rates 250] [--paced-ms MS]
       npm run bench -- --modes fleet [--quick] [--profile] [--agents 1000,3000,10000] [--idle-ms MS] [--log-level warn] [--verbose]
       npm run bench -- --modes fairness [--quick] [--workers 2] [--concurrency 8] [--rates 10] [--log-level warn] [--verbose]
       npm run bench -- --topology cluster [--quick] [--only one-redis,cluster,cluster-3r] [--agents 30]
       [--capabilities 3] [--routers 3] [--shards 1]
       [--reps N] [--tasks N] [--window N] [--workers N] [--concurrency N] [--log-level warn] [--verbose]`;

/** Thrown for a bad command line; the message is the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  /** `helped` when the usage was asked for (--help): the bench prints it to stdout and exits 0. */
  constructor(
    message: string,
    readonly helped = false,
  ) {
    super(message);
  }
}

function int(flag: string, value: string | undefined, min = 1): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min)
    throw new UsageError(`${flag} needs an integer ≥ ${min}\n${HELP}`);
  return n;
}

function list<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
): T[] {
  const items = (value ?? '').split(',').filter(Boolean);
  const bad = items.filter((i) => !allowed.includes(i as T));
  if (items.length === 0 || bad.length > 0)
    throw new UsageError(`${flag} takes a list of ${allowed.join(', ')}\n${HELP}`);
  return items as T[];
}

/** Reads the command line (the arguments after `--`). */
export function parseArgs(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const o: BenchOptions = {
    quick,
    routing: false,
    routerOnly: false,
    fairness: false,
    fleet: false,
    fleetSizes: [1000, 3000, 10_000],
    traceGc: false,
    agents: 30,
    idleMs: quick ? 8000 : 20_000,
    capabilities: 3,
    routers: 3,
    shards: 1,
    profile: false,
    reps: quick ? 1 : 3,
    floodTasks: quick ? 2000 : 20_000,
    floodWindow: 128,
    pacedRates: [200, 2000, 4000],
    pacedMs: quick ? 500 : 4000,
    httpMs: quick ? 1500 : 5000,
    httpConnections: 50,
    workers: 2,
    concurrency: 100,
    warmupTasks: quick ? 300 : 3000,
    systems: ['reach', 'bullmq', 'floor'],
    modes: ['flood', 'paced', 'http'],
    serviceLogLevel: 'warn',
    verbose: false,
    drainMs: quick ? 4000 : 20_000,
    deadlineMs: quick ? 100_000 : 25 * 60_000,
    from: 'auto',
    build: 'src',
  };
  let modesGiven = false;
  let only: SystemName[] | undefined;
  let workersGiven = false;
  /** Flags given on the command line, so a relay run keeps its own defaults for the others. */
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const next = () => argv[++i];
    if (flag) given.add(flag);
    switch (flag) {
      case '--quick':
        break;
      case '--routing':
        o.routing = true;
        break;
      case '--profile':
        o.profile = true;
        break;
      case '--trace-gc':
        o.traceGc = true;
        break;
      case '--reps':
        o.reps = int(flag, next());
        break;
      case '--tasks':
        o.floodTasks = int(flag, next());
        break;
      case '--window':
        o.floodWindow = int(flag, next());
        break;
      case '--workers':
        o.workers = int(flag, next());
        workersGiven = true;
        break;
      case '--topology': {
        const t = next();
        if (t !== 'cluster') throw new UsageError(`--topology takes cluster\n${HELP}`);
        o.topology = t;
        break;
      }
      case '--agents': {
        // A list only for --modes fleet (checked once every flag is read).
        const sizes = (next() ?? '').split(',').map((n) => int(flag, n));
        o.agents = sizes[0] ?? o.agents;
        o.fleetSizes = sizes;
        break;
      }
      case '--idle-ms':
        o.idleMs = int(flag, next(), 1000);
        break;
      case '--capabilities':
        o.capabilities = int(flag, next());
        break;
      case '--routers':
        o.routers = int(flag, next(), 2);
        break;
      case '--shards':
        o.shards = int(flag, next());
        break;
      case '--concurrency':
        o.concurrency = int(flag, next());
        break;
      case '--http-ms':
        o.httpMs = int(flag, next(), 100);
        break;
      case '--paced-ms':
        o.pacedMs = int(flag, next(), 100);
        break;
      case '--rates':
        o.pacedRates = (next() ?? '').split(',').map((r) => int(flag, r));
        break;
      case '--only':
        only = list(flag, next(), [
          ...SYSTEMS,
          ...TOPOLOGY_SYSTEMS,
          ...RELAY_SYSTEMS,
          ...ROUTER_ONLY_SYSTEMS,
        ]);
        break;
      case '--modes': {
        const modes = list(flag, next(), MODE_NAMES);
        const alone = modes.find((m) => (ALONE_MODES as readonly string[]).includes(m));
        if (alone && modes.length > 1) throw new UsageError(`--modes ${alone} runs alone\n${HELP}`);
        if (alone === 'router-only') o.routerOnly = true;
        else if (alone === 'fairness') o.fairness = true;
        else if (alone === 'fleet') o.fleet = true;
        else if (alone) o.relay = alone === 'relay' ? 'compare' : 'fleet';
        else o.modes = modes as Mode[];
        modesGiven = true;
        break;
      }
      case '--log-level':
        o.serviceLogLevel = next() ?? 'warn';
        break;
      case '--verbose':
        o.verbose = true;
        break;
      case '--from': {
        const from = next();
        if (from !== 'src' && from !== 'dist' && from !== 'auto')
          throw new UsageError(`--from takes src, dist or auto, not ${from ?? 'nothing'}`);
        o.from = from;
        break;
      }
      case '--help':
      case '-h':
        throw new UsageError(HELP, true);
      default:
        throw new UsageError(`unknown argument ${String(flag)}\n${HELP}`);
    }
  }
  if (o.relay) {
    if (o.routing || o.profile || o.topology || o.traceGc)
      throw new UsageError(
        `--modes ${o.relay === 'compare' ? 'relay' : 'relay-fleet'} runs alone, without --routing, --profile, --trace-gc or --topology\n${HELP}`,
      );
    applyRelayDefaults(o, given, only);
    return o;
  }
  if (o.fleet) {
    if (o.routing || o.topology || o.traceGc || only)
      throw new UsageError(
        `--modes fleet runs alone, without --routing, --trace-gc, --topology or --only\n${HELP}`,
      );
    applyFleetDefaults(o, given);
    return o;
  }
  if (given.has('--agents') && o.fleetSizes.length > 1)
    throw new UsageError(`--agents takes a list with --modes fleet only\n${HELP}`);
  if (o.fairness) {
    if (o.routing || o.profile || o.topology || o.traceGc || only)
      throw new UsageError(
        `--modes fairness runs alone, without --routing, --profile, --trace-gc, --topology or --only\n${HELP}`,
      );
    applyFairnessDefaults(o, given);
    return o;
  }
  if (o.routerOnly) {
    if (o.routing || o.topology)
      throw new UsageError(
        `--modes router-only runs alone, without --routing or --topology\n${HELP}`,
      );
    applyRouterOnlyDefaults(o, only);
    return o;
  }
  if (o.topology) {
    if (o.routing || o.profile || o.traceGc || modesGiven)
      throw new UsageError(
        `--topology runs floods only, without --routing, --profile or --trace-gc\n${HELP}`,
      );
    const bad = only?.filter((s) => !(TOPOLOGY_SYSTEMS as readonly string[]).includes(s));
    if (bad?.length)
      throw new UsageError(`--only takes ${TOPOLOGY_SYSTEMS.join(', ')} with --topology\n${HELP}`);
    o.systems = TOPOLOGY_SYSTEMS.filter((s) => !only || only.includes(s));
    o.modes = ['flood'];
    if (!workersGiven) o.workers = 3;
    if (o.agents < o.capabilities)
      throw new UsageError(
        `--agents must be at least --capabilities (each capability needs an agent)\n${HELP}`,
      );
    o.deadlineMs = quick ? 150_000 : 10 * 60_000;
  } else if (only) {
    const bad = only.filter((s) => !(SYSTEMS as readonly string[]).includes(s));
    if (bad.length) throw new UsageError(`--only takes a list of ${SYSTEMS.join(', ')}\n${HELP}`);
    o.systems = only;
  }
  if (o.profile) {
    // One Agent-Reach run (a flood unless --modes names another), profiled: the profile is of
    // the hot path, not of start-up.
    o.systems = ['reach'];
    o.modes = modesGiven ? [o.modes[0] ?? 'flood'] : ['flood'];
    o.reps = 1;
  }
  return o;
}

/**
 * `--modes fairness`'s own defaults, for the flags not given: a fleet of 2 agents of 8 slots (16
 * slots of 200 ms tasks: 80 tasks/s), tenant B at 10 tasks/s, one repetition within 6 minutes
 * (3 with --quick). Agent-Reach and BullMQ are started by the mode itself, not as systems.
 */
function applyFairnessDefaults(o: BenchOptions, given: ReadonlySet<string>): void {
  o.systems = [];
  o.modes = [];
  o.reps = 1;
  if (!given.has('--workers')) o.workers = 2;
  if (!given.has('--concurrency')) o.concurrency = 8;
  if (!given.has('--rates')) o.pacedRates = [10];
  o.deadlineMs = o.quick ? 3 * 60_000 : 6 * 60_000;
}

/**
 * `--modes fleet`'s own defaults, for the flags not given: 1,000, 3,000 and 10,000 agents (200
 * with --quick, which finishes within 90 s), idle windows of 30 s per heartbeat mode (8 s), the
 * services at their production cadences. Each size takes 3–8 minutes.
 */
function applyFleetDefaults(o: BenchOptions, given: ReadonlySet<string>): void {
  o.systems = [];
  o.modes = [];
  o.reps = 1;
  if (!given.has('--agents')) o.fleetSizes = o.quick ? [200] : [1000, 3000, 10_000];
  if (!given.has('--idle-ms')) o.idleMs = o.quick ? 8000 : 30_000;
  o.deadlineMs = o.quick ? 150_000 : 40 * 60_000;
}

/**
 * `--modes router-only`'s own settings: floods only (20,000 tasks, 2,000 with --quick, as the
 * comparison's), both systems unless `--only` names one, within 10 minutes (150 s with --quick).
 * `--profile` runs one flood of the router alone.
 */
function applyRouterOnlyDefaults(o: BenchOptions, only?: SystemName[]): void {
  const bad = only?.filter((s) => !(ROUTER_ONLY_SYSTEMS as readonly string[]).includes(s));
  if (bad?.length)
    throw new UsageError(
      `--only takes ${ROUTER_ONLY_SYSTEMS.join(', ')} with --modes router-only\n${HELP}`,
    );
  o.systems = ROUTER_ONLY_SYSTEMS.filter((s) => !only || only.includes(s));
  o.modes = ['flood'];
  o.deadlineMs = o.quick ? 150_000 : 10 * 60_000;
  if (o.profile) {
    // The floor is not profiled: the profiler's own cost would make the two incomparable.
    o.systems = ['router'];
    o.reps = 1;
  }
}

/**
 * The relay runs' own defaults, for the flags not given. `relay`: one agent process against one
 * relay serving one endpoint agent (the per-process costs compare one to one), 3,000-task floods
 * with 64 outstanding (below the agent's 100 slots), and a paced run at 200 tasks/s for the
 * latency the path adds, 3 interleaved repetitions, within 5 minutes. `relay-fleet`: 1,000
 * endpoint agents, and a paced run at 250 tasks/s over them for the per-task cost at that size.
 */
function applyRelayDefaults(
  o: BenchOptions,
  given: ReadonlySet<string>,
  only?: SystemName[],
): void {
  const { quick } = o;
  o.modes = ['flood', 'paced'];
  if (o.relay === 'compare') {
    const bad = only?.filter((s) => !(RELAY_SYSTEMS as readonly string[]).includes(s));
    if (bad?.length)
      throw new UsageError(`--only takes ${RELAY_SYSTEMS.join(', ')} with --modes relay\n${HELP}`);
    o.systems = RELAY_SYSTEMS.filter((s) => !only || only.includes(s));
    if (!given.has('--workers')) o.workers = 1;
    if (!given.has('--tasks')) o.floodTasks = quick ? 1000 : 3000;
    if (!given.has('--window')) o.floodWindow = 64;
    if (!given.has('--rates')) o.pacedRates = [200];
    if (!given.has('--paced-ms')) o.pacedMs = quick ? 1000 : 4000;
    o.warmupTasks = quick ? 300 : 1000;
    o.drainMs = quick ? 4000 : 10_000;
    o.deadlineMs = quick ? 150_000 : 5 * 60_000;
    return;
  }
  if (only) throw new UsageError(`--modes relay-fleet runs relay-http alone\n${HELP}`);
  o.systems = ['relay-http'];
  o.modes = ['paced'];
  o.reps = 1;
  if (!given.has('--agents')) o.agents = 1000;
  if (!given.has('--rates')) o.pacedRates = [250];
  if (!given.has('--paced-ms')) o.pacedMs = quick ? 3000 : 8000;
  o.drainMs = 10_000;
  o.deadlineMs = quick ? 150_000 : 5 * 60_000;
}
