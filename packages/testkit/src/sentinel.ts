import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  awaitReady,
  freePort,
  requireBinaries,
  spawnManaged,
  type ManagedProcess,
} from '@agent-reach/process-kit';

/** A Redis Sentinel watching one master. */
export interface OwnSentinel {
  port: number;
  /** The master's name at the sentinel. */
  name: string;
  /** `127.0.0.1:<port>`, as REDIS_SENTINELS takes it. */
  address: string;
  stop(): Promise<void>;
}

/**
 * Starts `redis-server <conf> --sentinel` on a free port, monitoring the master at
 * 127.0.0.1:`masterPort` under `name` (quorum 1), and resolves once it names that master.
 */
export async function startSentinel(masterPort: number, name = 'reach'): Promise<OwnSentinel> {
  const { 'redis-server': bin } = requireBinaries(['redis-server']);
  const dir = await mkdtemp(join(tmpdir(), 'reach-sentinel-'));
  const port = await freePort();
  // Sentinel rewrites its config file, so it gets one of its own.
  const conf = join(dir, 'sentinel.conf');
  await writeFile(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${name} 5000`,
      '',
    ].join('\n'),
  );
  const proc: ManagedProcess = await spawnManaged({
    name: 'redis-sentinel',
    command: bin,
    args: [conf, '--sentinel'],
    cwd: dir,
  });
  const knowsMaster = async (): Promise<boolean> => {
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      const addr = (await probe.call('SENTINEL', 'get-master-addr-by-name', name)) as
        string[] | null;
      return addr?.[1] === String(masterPort);
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  };
  try {
    await awaitReady(proc, `naming master ${name} on 127.0.0.1:${port}`, knowsMaster, 15_000);
  } catch (err: unknown) {
    await proc.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    name,
    address: `127.0.0.1:${port}`,
    async stop() {
      await proc.stop('SIGTERM').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
