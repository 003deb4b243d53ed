import { existsSync } from 'node:fs';
import { createInfluxDatabase } from '@agent-reach/process-kit';

/** Servers running in containers (testcontainers), for one test run. */
export interface ContainerStack {
  /** Empty (and the port 0) when Redis was not asked for. */
  redisUrl: string;
  redisPort: number;
  /** Empty when InfluxDB was not asked for. */
  influxUrl: string;
  /** InfluxDB 1.8 serves `/api/v2/write` itself, so this equals `influxUrl`. */
  influxV2Url: string;
  stop(): Promise<void>;
}

/**
 * A cheap guess that a Docker-compatible runtime is reachable: `DOCKER_HOST` is set or the default
 * socket exists. `REACH_TESTKIT_LOCAL=1` forces local processes even then.
 */
export function hasDockerRuntime(): boolean {
  if (process.env.REACH_TESTKIT_LOCAL === '1') return false;
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

/** Starts redis:7 and/or influxdb:1.8 with testcontainers. */
export async function startContainerStack(opts: {
  redis: boolean;
  influx: boolean;
}): Promise<ContainerStack> {
  // Imported on demand: most runs here have no Docker and testcontainers is heavy to load.
  const { GenericContainer, Wait } = await import('testcontainers');
  const redis = opts.redis
    ? await new GenericContainer('redis:7')
        .withCommand([
          'redis-server',
          '--save',
          '',
          '--appendonly',
          'no',
          '--enable-debug-command',
          'yes',
        ])
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
        .start()
    : undefined;
  const redisPort = redis ? redis.getMappedPort(6379) : 0;
  const redisUrl = redis ? `redis://${redis.getHost()}:${redisPort}` : '';
  if (!opts.influx) {
    return {
      redisUrl,
      redisPort,
      influxUrl: '',
      influxV2Url: '',
      stop: async () => void (await redis?.stop()),
    };
  }
  try {
    const influx = await new GenericContainer('influxdb:1.8')
      .withEnvironment({
        INFLUXDB_DB: 'reach',
        INFLUXDB_HTTP_AUTH_ENABLED: 'false',
        INFLUXDB_REPORTING_DISABLED: 'true',
        INFLUXDB_HTTP_LOG_ENABLED: 'false',
      })
      .withExposedPorts(8086)
      .withWaitStrategy(Wait.forHttp('/ping', 8086).forStatusCode(204))
      .start();
    const influxUrl = `http://${influx.getHost()}:${influx.getMappedPort(8086)}`;
    await createInfluxDatabase(influxUrl, 'reach');
    return {
      redisUrl,
      redisPort,
      influxUrl,
      influxV2Url: influxUrl,
      async stop() {
        await influx.stop();
        await redis?.stop();
      },
    };
  } catch (err: unknown) {
    await redis?.stop();
    throw err;
  }
}
