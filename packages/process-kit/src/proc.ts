import { spawn, type ChildProcess } from 'node:child_process';

/** How many output lines a process keeps for failure messages. */
const OUTPUT_LINES = 200;

/** A child process this package started, with its recent output kept for error messages. */
export interface ManagedProcess {
  /** Name used in messages and output prefixes. */
  readonly name: string;
  readonly pid: number;
  /** Resolves with the exit code (`null` when a signal ended it) once the process has exited. */
  readonly exited: Promise<number | null>;
  /** True once the process has exited. */
  hasExited(): boolean;
  /** The signal that ended the process, if one did. */
  exitSignal(): NodeJS.Signals | null;
  /** The last ~200 lines of stdout and stderr. */
  output(): string;
  /** Sends a signal; a no-op once the process has exited. */
  kill(signal: NodeJS.Signals): void;
  /** Sends `signal` (default SIGTERM), waits up to `graceMs` (default 10 s), then SIGKILL. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

/** Options for {@link spawnManaged}. */
export interface SpawnOptions {
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Own process group, so a terminal's Ctrl-C reaches only our parent, which stops us in order. */
  detached?: boolean;
  /** Called with each complete output line, e.g. to echo it with a prefix. */
  onLine?: (line: string) => void;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Last resort: if our process exits without stopping its children, don't leave them running. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/** Keeps the last `max` lines of a stream of chunks. */
class LineRing {
  private readonly lines: string[] = [];
  private partial = '';
  constructor(
    private readonly max: number,
    private readonly onLine?: (line: string) => void,
  ) {}

  push(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.add(line);
  }

  flush(): void {
    if (this.partial !== '') this.add(this.partial);
    this.partial = '';
  }

  text(): string {
    return [...this.lines, ...(this.partial ? [this.partial] : [])].join('\n');
  }

  private add(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.max) this.lines.shift();
    this.onLine?.(line);
  }
}

/** Spawns a process with piped output and a promise of its exit. Throws if it cannot start. */
export async function spawnManaged(opts: SpawnOptions): Promise<ManagedProcess> {
  installExitHook();
  const child = spawn(opts.command, [...opts.args], {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  const ring = new LineRing(OUTPUT_LINES, opts.onLine);
  child.stdout?.setEncoding('utf8').on('data', (c: string) => ring.push(c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => ring.push(c));

  let done = false;
  let signal: NodeJS.Signals | null = null;
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (err) => {
      ring.push(`\n[spawn error] ${err.message}\n`);
      if (child.pid === undefined) {
        done = true;
        resolve(null);
      }
    });
    // 'close' (not 'exit') so the output ring holds everything the process wrote.
    child.once('close', (code, sig) => {
      done = true;
      signal = sig;
      live.delete(child);
      ring.flush();
      resolve(code);
    });
  });

  if (child.pid === undefined) {
    await exited;
    throw new Error(`could not start ${opts.name} (${opts.command}): ${ring.text().trim()}`);
  }
  const pid = child.pid;
  live.add(child);

  const kill = (sig: NodeJS.Signals): void => {
    if (!done) child.kill(sig);
  };
  return {
    name: opts.name,
    pid,
    exited,
    hasExited: () => done,
    exitSignal: () => signal,
    output: () => ring.text(),
    kill,
    async stop(sig: NodeJS.Signals = 'SIGTERM', graceMs = 10_000) {
      if (done) return exited;
      kill(sig);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), graceMs);
      });
      const first = await Promise.race([exited, timeout]);
      clearTimeout(timer);
      if (first !== 'timeout') return first;
      kill('SIGKILL');
      return exited;
    },
  };
}

/** Describes how a process ended, for messages: `exit code 1` or `signal SIGKILL`. */
export function describeExit(proc: ManagedProcess, code: number | null): string {
  const sig = proc.exitSignal();
  return sig ? `signal ${sig}` : `exit code ${String(code)}`;
}

/** The last `n` lines of a process's output, indented, for error messages. */
export function outputTail(proc: ManagedProcess, n = 30): string {
  const lines = proc.output().trimEnd().split('\n').slice(-n);
  return lines.map((l) => `    ${l}`).join('\n');
}
