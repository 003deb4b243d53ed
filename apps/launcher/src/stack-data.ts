import { join } from 'node:path';
import {
  freePort,
  isPortFree,
  removePid,
  requireBinaries,
  startInfluxd,
  startInfluxV2Proxy,
  startRedisServer,
  writePid,
  type ManagedProcess,
  type ServerBinary,
} from '@agent-reach/process-kit';
import { DEFAULT_PORTS } from '@agent-reach/protocol';

/** Options for {@link startDataServices}. */
export interface DataServicesOptions {
  /** `.reach/` in the repository: data survives restarts. */
  stateDir: string;
  /** Use this Redis instead of starting one. */
  redisUrl?: string;
  /** Start no Redis at all (a Redis Cluster is started or given elsewhere). @default false */
  noRedis?: boolean;
  /** Use this InfluxDB instead of starting one. */
  influxUrl?: string;
  /** With `influxUrl`: its v2-write URL, if different. */
  influxV2Url?: string;
  bucket: string;
  /** Prints a status line. */
  log: (line: string) => void;
  /** Each output line of a started server, with its name. */
  onLine: (name: string, line: string) => void;
}

/** Redis and InfluxDB for `npm start`, given or started. */
export interface DataServices {
  /** Undefined with `noRedis`. */
  redisUrl: string | undefined;
  /** Serves the 1.x API and, locally through nginx, `/api/v2/write` too. */
  influxUrl: string;
  influxV2Url: string;
  /** Processes started here, in start order (stop them in reverse). */
  procs: ManagedProcess[];
  /** Forget the pid files once the processes have stopped. */
  clearPids(): Promise<void>;
}

async function preferredPort(port: number): Promise<number> {
  return (await isPortFree(port)) ? port : freePort();
}

/**
 * Starts what is not given: `redis-server` with an fsync'd append-only file in `.reach/redis`
 * on 6379 (or a free port), influxd 1.x with its data in `.reach/influxdb` on a free port, and
 * nginx in front of it on 8086 (or a free port) serving both the 1.x API and `/api/v2/write`.
 * Each gets a pid file in `.reach/run/`.
 */
export async function startDataServices(opts: DataServicesOptions): Promise<DataServices> {
  const runDir = join(opts.stateDir, 'run');
  const pidFile = (name: string) => join(runDir, `${name}.pid`);
  const needed: ServerBinary[] = [
    ...(opts.redisUrl || opts.noRedis ? [] : (['redis-server'] as const)),
    ...(opts.influxUrl ? [] : (['influxd', 'nginx'] as const)),
  ];
  const bins = requireBinaries(needed);

  const procs: ManagedProcess[] = [];
  const track = async (proc: ManagedProcess) => {
    procs.push(proc);
    await writePid(pidFile(proc.name), proc.pid, proc.name);
  };
  const onLine = (name: string) => (line: string) => opts.onLine(name, line);
  try {
    let redisUrl = opts.redisUrl;
    if (!redisUrl && !opts.noRedis) {
      const port = await preferredPort(DEFAULT_PORTS.redis);
      const dir = join(opts.stateDir, 'redis');
      const proc = await startRedisServer({
        bin: bins['redis-server'],
        dir,
        port,
        persistent: true,
        detached: true,
        onLine: onLine('redis'),
      });
      await track(proc);
      redisUrl = `redis://127.0.0.1:${port}`;
      opts.log(`redis-server ${redisUrl} (pid ${proc.pid}, append-only file in ${dir})`);
    }
    let influxUrl = opts.influxUrl;
    let influxV2Url = opts.influxV2Url ?? opts.influxUrl;
    if (!influxUrl) {
      const [httpPort, rpcPort, proxyPort] = [
        await freePort(),
        await freePort(),
        await preferredPort(DEFAULT_PORTS.influx),
      ];
      const dir = join(opts.stateDir, 'influxdb');
      const influxd = await startInfluxd({
        bin: bins.influxd,
        dir,
        httpPort,
        rpcPort,
        databases: [opts.bucket],
        detached: true,
        onLine: onLine('influxd'),
      });
      await track(influxd);
      const nginx = await startInfluxV2Proxy({
        bin: bins.nginx,
        dir: join(opts.stateDir, 'nginx'),
        port: proxyPort,
        upstreamPort: httpPort,
        detached: true,
        onLine: onLine('nginx'),
      });
      await track(nginx);
      influxUrl = influxV2Url = `http://127.0.0.1:${proxyPort}`;
      opts.log(`influxd http://127.0.0.1:${httpPort} (pid ${influxd.pid}, data in ${dir})`);
      opts.log(`nginx ${influxUrl} → influxd, with /api/v2/write (pid ${nginx.pid})`);
    }
    return {
      redisUrl,
      influxUrl,
      influxV2Url: influxV2Url ?? influxUrl,
      procs,
      clearPids: async () => {
        for (const p of procs) await removePid(pidFile(p.name));
      },
    };
  } catch (err: unknown) {
    for (const p of [...procs].reverse()) await p.stop('SIGTERM', 10_000);
    for (const p of procs) await removePid(pidFile(p.name));
    throw err;
  }
}
