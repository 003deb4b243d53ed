import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Python the SDK is for: Debian's, never a pyenv one first on PATH. */
export const PYTHON = '/usr/bin/python3';
/** sdks/python in this checkout. */
export const PY_SDK = join(fileURLToPath(new URL('../..', import.meta.url)), 'sdks', 'python');

/** A Python agent process: its output so far, and how it ended. */
export interface PythonAgent {
  proc: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or 128 + signal) once the process ended. */
  exited: Promise<number>;
  /** SIGTERM (a graceful drain), then the exit code; SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<number>;
}

/** True when /usr/bin/python3 imports redis (Debian's python3-redis, added by the install step). */
export function pythonRedisPresent(): boolean {
  return spawnSync(PYTHON, ['-c', 'import redis'], { stdio: 'ignore' }).status === 0;
}

/**
 * Runs a Python script (a path absolute or in sdks/python) with the SDK on PYTHONPATH (sdks/python/src) and `env`.
 * The test that starts it stops it.
 */
export function startPythonAgent(script: string, env: Record<string, string>): PythonAgent {
  const proc = spawn(PYTHON, [resolve(PY_SDK, script)], {
    env: {
      PATH: process.env.PATH ?? '',
      PYTHONPATH: join(PY_SDK, 'src'),
      PYTHONUNBUFFERED: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => void (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => void (out += d.toString()));
  const exited = new Promise<number>((resolve) =>
    proc.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))),
  );
  return {
    proc,
    output: () => out,
    exited,
    async stop(graceMs = 25_000) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
