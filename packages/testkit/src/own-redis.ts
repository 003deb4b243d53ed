import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  requireBinaries,
  startRedisServer,
  type ManagedProcess,
} from '@agent-reach/process-kit';

/** A redis-server a test owns: to kill, pause and restart without touching the shared one. */
export interface OwnRedis {
  url: string;
  port: number;
  /** The running server's pid (changes on restart). */
  pid(): number;
  /** Sends a signal to the server (SIGKILL to crash it, SIGSTOP/SIGCONT to freeze it). */
  kill(signal: NodeJS.Signals): void;
  /** Resolves once the current server process has exited. */
  exited(): Promise<unknown>;
  /** Starts the server again on the same port and data folder (AOF data comes back). */
  restart(): Promise<void>;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts a redis-server of the test's own on a free port in a temp folder. With `persistent`,
 * it writes an append-only file with `appendfsync always`, so a SIGKILL loses no acknowledged
 * write and a restart brings the data back.
 */
export async function startOwnRedis(opts: { persistent?: boolean } = {}): Promise<OwnRedis> {
  const { 'redis-server': bin } = requireBinaries(['redis-server']);
  const dir = await mkdtemp(join(tmpdir(), 'reach-own-redis-'));
  const port = await freePort();
  const start = () => startRedisServer({ bin, dir, port, persistent: opts.persistent ?? false });
  let proc: ManagedProcess = await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: () => proc.pid,
    kill: (signal) => proc.kill(signal),
    exited: () => proc.exited,
    async restart() {
      proc = await start();
    },
    async stop() {
      await proc.stop('SIGTERM').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
