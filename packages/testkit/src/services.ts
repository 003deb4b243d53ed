import { createInfluxDatabase } from '@agent-reach/process-kit';
import { hasDockerRuntime, startContainerStack } from './containers.ts';
import { startLocalStack } from './local-stack.ts';
import { checkRedisAnswers } from './redis-check.ts';
import { startTestCluster, testRedisMode, type TestCluster } from './test-cluster.ts';

/** Real Redis and InfluxDB for a test run, wherever they came from. */
export interface Services {
  /** `redis://host:port` */
  redisUrl: string;
  /** InfluxDB 1.x API (`/ping`, `/write`, `/query`); empty when started with `influx: false`. */
  influxUrl: string;
  /**
   * Serves InfluxDB 2's `/api/v2/write` (what @influxdata/influxdb-client's WriteApi uses) as
   * well as the 1.x endpoints. Locally an nginx in front of influxd 1.6; with InfluxDB 1.8+ the
   * same as `influxUrl`. Empty when started with `influx: false`.
   */
  influxV2Url: string;
  /** Database / bucket the events go to: `INFLUX_BUCKET` or `reach`. It exists. */
  influxBucket: string;
  redisPort: number;
  /** Seed nodes `host:port,…` on the cluster leg (see {@link startServices}); else undefined. */
  redisClusterNodes?: string;
  /** Set when this call started a local `redis-server`. */
  redisPid?: number;
  /** Stops only what this call started and removes its temp directory. Idempotent. */
  stop(): Promise<void>;
}

/** Options for {@link startServices}. */
export interface StartServicesOptions {
  /** Start (or connect to) InfluxDB as well as Redis. @default true */
  influx?: boolean;
}

function portOf(url: string, fallback: number): number {
  const port = new URL(url).port;
  return port ? Number(port) : fallback;
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}

/**
 * Provides real Redis and InfluxDB. Each comes from, in order: `REDIS_URL` / `INFLUX_URL` (and
 * `INFLUX_V2_URL`, defaulting to `INFLUX_URL`) when set; otherwise containers (redis:7,
 * influxdb:1.8) when a Docker runtime is reachable; otherwise local `redis-server`, `influxd`
 * 1.x and `nginx` processes on free 127.0.0.1 ports in a temp directory.
 *
 * With `REACH_TEST_REDIS=cluster` (the cluster leg) Redis is a Redis Cluster instead: the one
 * `REDIS_CLUSTER_NODES` names, or a local 3-master cluster of `redis-server` processes.
 *
 * @throws {MissingBinaryError} when local processes are needed and a binary is not installed.
 */
export async function startServices(opts: StartServicesOptions = {}): Promise<Services> {
  const wantInflux = opts.influx ?? true;
  const influxBucket = process.env.INFLUX_BUCKET || 'reach';
  const cluster: TestCluster | undefined =
    testRedisMode() === 'cluster' ? await startTestCluster() : undefined;
  // The cluster stands in for a given REDIS_URL: no standalone Redis is started beside it.
  const envRedis = cluster?.url ?? (process.env.REDIS_URL || undefined);
  const envInflux = wantInflux ? process.env.INFLUX_URL || undefined : undefined;
  const needRedis = !envRedis;
  const needInflux = wantInflux && !envInflux;
  // A given Redis that does not answer ends the run within 10 s, naming it.
  if (!cluster && envRedis) await checkRedisAnswers(envRedis);

  let started: Omit<Services, 'influxBucket' | 'stop'> & { stop(): Promise<void> } = {
    redisUrl: envRedis ?? '',
    redisPort: envRedis ? portOf(envRedis, 6379) : 0,
    influxUrl: '',
    influxV2Url: '',
    stop: async () => {},
  };
  if (needRedis || needInflux) {
    const which = { redis: needRedis, influx: needInflux };
    started = await (
      hasDockerRuntime()
        ? startContainerStack(which).catch((err: unknown) => {
            const why = err instanceof Error ? err.message : String(err);
            throw new Error(
              `testcontainers could not start redis:7 / influxdb:1.8 (${why}). A Docker runtime ` +
                'seemed present (DOCKER_HOST or /var/run/docker.sock); set REACH_TESTKIT_LOCAL=1 to ' +
                'use local redis-server / influxd / nginx instead.',
              { cause: err },
            );
          })
        : startLocalStack(which)
    ).catch(async (err: unknown) => {
      await cluster?.stop();
      throw err;
    });
  }
  const local = started;
  const stopAll = async () => {
    await local.stop();
    await cluster?.stop();
  };

  const redisUrl = envRedis ?? started.redisUrl;
  const influxUrl = envInflux ?? started.influxUrl;
  const influxV2Url = envInflux ? process.env.INFLUX_V2_URL || envInflux : started.influxV2Url;
  if (envInflux) {
    // Best effort: a fresh 1.x server needs the database; 2.x answers this with an error we ignore.
    await createInfluxDatabase(envInflux, influxBucket).catch(() => undefined);
  } else if (needInflux && influxBucket !== 'reach') {
    await createInfluxDatabase(influxUrl, influxBucket).catch(async (err: unknown) => {
      await stopAll();
      throw err;
    });
  }
  return {
    redisUrl,
    redisPort: envRedis ? portOf(envRedis, 6379) : started.redisPort,
    ...(!envRedis && started.redisPid !== undefined ? { redisPid: started.redisPid } : {}),
    ...(cluster ? { redisClusterNodes: cluster.seeds } : {}),
    influxUrl,
    influxV2Url,
    influxBucket,
    stop: once(stopAll),
  };
}
