import type { Mode } from './load/protocol.ts';

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
export type SystemName = (typeof SYSTEMS)[number] | TopologySystemName;

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
  /** Agents of the `--topology` fleet, spread over the processes in {@link workers}. @default 30 */
  agents: number;
  /** Capabilities the `--topology` fleet serves, agent i serving capability i mod this. @default 3 */
  capabilities: number;
  /** Routers behind nginx in the `cluster-3r` system. @default 3 */
  routers: number;
  /** REACH_SHARDS of every `--topology` system: shards of the acks stream and the due set. @default 1 */
  shards: number;
  /** CPU-profile the router, registry-sync and agents during one Agent-Reach run (flood unless --modes says), then summarise. */
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
}

const HELP = `usage: npm run bench -- [--quick] [--routing] [--profile] [--reps N] [--tasks N] [--window N]
       [--workers N] [--concurrency N] [--http-ms MS] [--paced-ms MS] [--rates 200,2000,4000]
       [--only reach,bullmq,floor,reach-auth] [--modes flood,paced,http] [--log-level warn] [--verbose]
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
    agents: 30,
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
  };
  let modesGiven = false;
  let only: SystemName[] | undefined;
  let workersGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const next = () => argv[++i];
    switch (flag) {
      case '--quick':
        break;
      case '--routing':
        o.routing = true;
        break;
      case '--profile':
        o.profile = true;
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
      case '--agents':
        o.agents = int(flag, next());
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
        only = list(flag, next(), [...SYSTEMS, ...TOPOLOGY_SYSTEMS]);
        break;
      case '--modes':
        o.modes = list(flag, next(), ['flood', 'paced', 'http'] as const);
        modesGiven = true;
        break;
      case '--log-level':
        o.serviceLogLevel = next() ?? 'warn';
        break;
      case '--verbose':
        o.verbose = true;
        break;
      case '--help':
      case '-h':
        throw new UsageError(HELP, true);
      default:
        throw new UsageError(`unknown argument ${String(flag)}\n${HELP}`);
    }
  }
  if (o.topology) {
    if (o.routing || o.profile || modesGiven)
      throw new UsageError(`--topology runs floods only, without --routing or --profile\n${HELP}`);
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
