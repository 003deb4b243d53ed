import { mkdir } from 'node:fs/promises';
import { spawnManaged, type ManagedProcess } from './proc.ts';
import { awaitReady } from './ready.ts';
import { redisPing } from './net.ts';

/** Options for {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Path of the `redis-server` binary. */
  bin: string;
  /** Working directory for its data (created if missing). */
  dir: string;
  port: number;
  /**
   * Keep data across restarts with an fsync'd append-only file (`npm start`); otherwise no
   * persistence at all and DEBUG enabled for local clients (tests).
   * @default false
   */
  persistent?: boolean;
  /** @default 15000 */
  timeoutMs?: number;
  /** Each output line, e.g. to echo it. */
  onLine?: (line: string) => void;
  /** Own process group (see {@link spawnManaged}). @default false */
  detached?: boolean;
}

/** Starts `redis-server` bound to 127.0.0.1 and resolves once it answers PING. */
export async function startRedisServer(opts: RedisServerOptions): Promise<ManagedProcess> {
  await mkdir(opts.dir, { recursive: true });
  const storage = opts.persistent
    ? ['--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no', '--enable-debug-command', 'local'];
  const proc = await spawnManaged({
    name: 'redis-server',
    command: opts.bin,
    args: [
      '--port',
      String(opts.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      opts.dir,
      '--daemonize',
      'no',
      '--logfile',
      '',
      '--save',
      '',
      ...storage,
    ],
    cwd: opts.dir,
    onLine: opts.onLine,
    detached: opts.detached,
  });
  try {
    await awaitReady(
      proc,
      `answering PING on 127.0.0.1:${opts.port}`,
      () => redisPing(opts.port),
      opts.timeoutMs ?? 15_000,
    );
  } catch (err: unknown) {
    await proc.stop('SIGKILL');
    throw err;
  }
  return proc;
}
