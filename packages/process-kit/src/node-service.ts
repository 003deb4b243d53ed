import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnManaged } from './proc.ts';
import { awaitReady } from './ready.ts';
import { httpStatus } from './net.ts';

/** A Node service started by {@link startNodeService}. */
export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  /** Sends `signal` (default SIGTERM), waits up to 10 s, then SIGKILL; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Sends a signal without waiting, e.g. SIGKILL to play a crash. */
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the exit code (`null` when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** The signal that ended it, once it has exited by one (`SIGKILL`, `SIGSEGV`, …). */
  exitSignal(): NodeJS.Signals | null;
  /** Its last ~200 lines of stdout and stderr, for failure messages. */
  output(): string;
}

/** Options for {@link startNodeService}. */
export interface NodeServiceOptions {
  /** Used in messages and output prefixes. */
  name: string;
  /** Absolute path of the entry file: TypeScript runs through tsx, JavaScript as built. */
  entry: string;
  /** Added to (and overriding) this process's environment. */
  env: Record<string, string>;
  /** When given, resolve only once `GET healthUrl` answers 200. */
  healthUrl?: string;
  /** Deadline for the health check. @default 20000 */
  timeoutMs?: number;
  /** Working directory. @default the nearest directory above `entry` holding a package.json */
  cwd?: string;
  /** Called with each output line (the line is kept for `output()` either way). */
  onLine?: (line: string) => void;
  /** Own process group, so a terminal's Ctrl-C reaches only the parent. @default false */
  detached?: boolean;
}

/**
 * The export condition under which the workspace packages resolve to their built JavaScript
 * (`dist/`) instead of their TypeScript sources: `node --conditions=agent-reach-dist …`.
 */
export const DIST_CONDITION = 'agent-reach-dist';

let tsxLoader: string | undefined;

/** The `file:` URL of tsx's ESM loader, for `node --import`, found from this package. */
export function tsxLoaderUrl(): string {
  tsxLoader ??= pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return tsxLoader;
}

function packageDirOf(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return dirname(file);
  }
}

/** How node runs `entry`: a built one with {@link DIST_CONDITION}, a TypeScript one through tsx. */
export function nodeArgsFor(entry: string): string[] {
  return /\.[cm]?ts$/.test(entry)
    ? ['--import', tsxLoaderUrl(), entry]
    : [`--conditions=${DIST_CONDITION}`, entry];
}

/**
 * Spawns `node <entry>` (see {@link nodeArgsFor}) with `env` on top of this process's environment, keeps its
 * output for failure messages, and (with `healthUrl`) waits until the service answers 200.
 * If it exits or the deadline passes first, it is stopped and the error shows its output.
 */
export async function startNodeService(opts: NodeServiceOptions): Promise<ServiceProcess> {
  const proc = await spawnManaged({
    name: opts.name,
    command: process.execPath,
    args: nodeArgsFor(opts.entry),
    env: { ...process.env, ...opts.env },
    cwd: opts.cwd ?? packageDirOf(opts.entry),
    onLine: opts.onLine,
    detached: opts.detached,
  });
  const { healthUrl } = opts;
  if (healthUrl) {
    try {
      const healthy = async () => (await httpStatus(healthUrl)) === 200;
      await awaitReady(proc, `answering 200 on ${healthUrl}`, healthy, opts.timeoutMs ?? 20_000);
    } catch (err: unknown) {
      await proc.stop('SIGKILL');
      throw err;
    }
  }
  return {
    name: proc.name,
    pid: proc.pid,
    exited: proc.exited,
    exitSignal: () => proc.exitSignal(),
    kill: (signal) => proc.kill(signal),
    stop: (signal) => proc.stop(signal ?? 'SIGTERM', 10_000),
    output: () => proc.output(),
  };
}
