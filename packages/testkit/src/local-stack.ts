import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  portTaken,
  requireBinaries,
  startInfluxd,
  startInfluxV2Proxy,
  startRedisServer,
  type ManagedProcess,
  type ServerBinary,
} from '@agent-reach/process-kit';

/** Local servers in a fresh temp directory, for one test run. */
export interface LocalStack {
  /** Empty (and the port 0) when Redis was not asked for. */
  redisUrl: string;
  redisPort: number;
  redisPid?: number;
  /** Empty when InfluxDB was not asked for. */
  influxUrl: string;
  influxV2Url: string;
  /** Stops what it started, newest first, then removes the temp directory. */
  stop(): Promise<void>;
}

/** How many times to retry with fresh ports: a port picked free can be taken before we bind it. */
const ATTEMPTS = 3;

/** Stops processes one after another, in the order given, each with SIGTERM then SIGKILL. */
export async function stopAll(procs: readonly ManagedProcess[]): Promise<void> {
  for (const p of procs) await p.stop('SIGTERM', 10_000);
}

/** Which servers to start. */
export interface LocalStackOptions {
  redis: boolean;
  influx: boolean;
}

async function startOnce(
  dir: string,
  bins: Partial<Record<ServerBinary, string>>,
  opts: LocalStackOptions,
) {
  const started: ManagedProcess[] = [];
  try {
    let redisPort = 0;
    let redisPid: number | undefined;
    if (opts.redis) {
      redisPort = await freePort();
      const redis = await startRedisServer({
        bin: bins['redis-server']!,
        dir: join(dir, 'redis'),
        port: redisPort,
      });
      started.push(redis);
      redisPid = redis.pid;
    }
    let influxUrl = '';
    let influxV2Url = '';
    if (opts.influx) {
      const [httpPort, rpcPort, proxyPort] = [await freePort(), await freePort(), await freePort()];
      const influxd = await startInfluxd({
        bin: bins.influxd!,
        dir: join(dir, 'influxdb'),
        httpPort,
        rpcPort,
        databases: ['reach'],
      });
      started.push(influxd);
      const nginx = await startInfluxV2Proxy({
        bin: bins.nginx!,
        dir: join(dir, 'nginx'),
        port: proxyPort,
        upstreamPort: httpPort,
      });
      started.push(nginx);
      influxUrl = `http://127.0.0.1:${httpPort}`;
      influxV2Url = `http://127.0.0.1:${proxyPort}`;
    }
    return { redisPort, redisPid, influxUrl, influxV2Url, started };
  } catch (err: unknown) {
    await stopAll([...started].reverse());
    throw err;
  }
}

/**
 * Starts `redis-server` and/or influxd 1.x with an nginx v2-write front, on free 127.0.0.1 ports
 * in a new temp directory.
 * @throws {MissingBinaryError} when a binary is not installed, saying what to install.
 */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const names: ServerBinary[] = [
    ...(opts.redis ? (['redis-server'] as const) : []),
    ...(opts.influx ? (['influxd', 'nginx'] as const) : []),
  ];
  const bins = requireBinaries(names);
  const dir = await mkdtemp(join(tmpdir(), 'agent-reach-'));
  let lastError: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const runDir = join(dir, `run${attempt}`);
    try {
      const s = await startOnce(runDir, bins, opts);
      return {
        redisUrl: opts.redis ? `redis://127.0.0.1:${s.redisPort}` : '',
        redisPort: s.redisPort,
        ...(s.redisPid === undefined ? {} : { redisPid: s.redisPid }),
        influxUrl: s.influxUrl,
        influxV2Url: s.influxV2Url,
        async stop() {
          await stopAll([...s.started].reverse());
          await rm(dir, { recursive: true, force: true });
        },
      };
    } catch (err: unknown) {
      lastError = err;
      // Only a lost race for a port is worth another try.
      if (!portTaken(err)) break;
    }
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}
