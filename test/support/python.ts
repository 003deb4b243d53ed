import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Python the SDK is for: Debian's, never a pyenv one first on PATH. */
export const PYTHON = '/usr/bin/python3';
/** sdks/python in this checkout. */
export const PY_SDK = join(fileURLToPath(new URL('../..', import.meta.url)), 'sdks', 'python');

/** A Python agent process: its output so far, and how it ended. */
export interface PythonAgent {
  proc: ChildProcess;
  /** stdout and stderr as their chunks arrived (for messages: a line may be cut by the other's). */
  output(): string;
  /**
   * stdout alone, whose lines are whole: unbuffered, `print` writes a line's text and its newline
   * separately, and a log line on stderr may arrive between them.
   */
  stdout(): string;
  /** Resolves with the exit code (or 128 + signal) once the process ended. */
  exited: Promise<number>;
  /** SIGTERM (a graceful drain), then the exit code; SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<number>;
}

/** Every file of the package a wheel is built from (pyproject.toml, README.md, src/), sorted. */
function packageFiles(dir = PY_SDK): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== '__pycache__' && !e.name.endsWith('.egg-info')) walk(p);
      } else if (e.name.endsWith('.py')) out.push(p);
    }
  };
  walk(join(dir, 'src'));
  return [join(dir, 'pyproject.toml'), join(dir, 'README.md'), ...out.sort()];
}

function run(command: string, args: string[], what: string): void {
  const r = spawnSync(command, args, {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', PIP_NO_INDEX: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1' },
  });
  if (r.status !== 0) throw new Error(`${what} failed (${r.status}):\n${r.stdout}${r.stderr}`);
}

/** Where {@link pythonVenv} keeps its virtualenv, and the wheel it installed. */
export interface PythonVenv {
  /** The virtualenv's python: agent_reach from the wheel, redis from Debian's python3-redis. */
  python: string;
  wheel: string;
}

/**
 * The SDK as a user installs it without a package index: a wheel built from sdks/python
 * (`pip wheel --no-build-isolation --no-deps`), installed with `pip install --no-index` into a
 * fresh `--system-site-packages` virtualenv of /usr/bin/python3, whose only dependency, redis, is
 * Debian's. Built once per content of the package (a hash of its files names the directory), so
 * the Python test files of one run share it and a changed SDK gets a new one.
 */
export function pythonVenv(): PythonVenv {
  const hash = createHash('sha256');
  for (const f of packageFiles())
    hash.update(relative(PY_SDK, f)).update('\0').update(readFileSync(f));
  const dir = join(tmpdir(), `reach-py-venv-${hash.digest('hex').slice(0, 16)}`);
  const python = join(dir, 'venv', 'bin', 'python');
  const done = (): PythonVenv | undefined => {
    const wheels = existsSync(join(dir, 'wheel')) ? readdirSync(join(dir, 'wheel')) : [];
    const wheel = wheels.find((w) => w.endsWith('.whl'));
    return existsSync(python) && wheel ? { python, wheel: join(dir, 'wheel', wheel) } : undefined;
  };
  const ready = done();
  if (ready) return ready;
  // Built aside, then moved into place: a run stopped midway leaves no half-made venv behind.
  const work = `${dir}.${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const wheelDir = join(work, 'wheel');
    run(
      PYTHON,
      ['-m', 'pip', 'wheel', '--no-build-isolation', '--no-deps', '-w', wheelDir, PY_SDK],
      'building the wheel',
    );
    run(PYTHON, ['-m', 'venv', '--system-site-packages', join(work, 'venv')], 'making the venv');
    const wheel = readdirSync(wheelDir).find((w) => w.endsWith('.whl')) ?? '';
    run(
      join(work, 'venv', 'bin', 'python'),
      ['-m', 'pip', 'install', '--no-index', '--no-build-isolation', join(wheelDir, wheel)],
      'installing the wheel',
    );
    // Only venv/bin/python is used, and it finds its site-packages from where it is run (its
    // pyvenv.cfg), so the finished directory may move into place; a run that finished first wins.
    if (done() === undefined) renameSync(work, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const built = done();
  if (!built) throw new Error(`the Python venv at ${dir} is incomplete`);
  return built;
}

/** True when /usr/bin/python3 imports redis (Debian's python3-redis, added by the install step). */
export function pythonRedisPresent(): boolean {
  return spawnSync(PYTHON, ['-c', 'import redis'], { stdio: 'ignore' }).status === 0;
}

/** Throws, saying what to install, unless /usr/bin/python3 imports redis. */
export function requirePythonRedis(): void {
  if (!pythonRedisPresent())
    throw new Error(
      `${PYTHON} cannot import redis: install Debian's python3-redis (npm test does)`,
    );
}

/**
 * Runs a Python script (a path absolute or in sdks/python) with `env`, on the virtualenv's python
 * of {@link pythonVenv}: the SDK as installed from its wheel. The test that starts it stops it.
 */
export function startPythonAgent(script: string, env: Record<string, string>): PythonAgent {
  const proc = spawn(pythonVenv().python, [resolve(PY_SDK, script)], {
    env: {
      PATH: process.env.PATH ?? '',
      PYTHONUNBUFFERED: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  proc.stdout?.on('data', (d: Buffer) => {
    const text = d.toString();
    out += text;
    stdout += text;
  });
  proc.stderr?.on('data', (d: Buffer) => void (out += d.toString()));
  const exited = new Promise<number>((resolve) =>
    proc.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))),
  );
  return {
    proc,
    output: () => out,
    stdout: () => stdout,
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
