import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { forgetPid, recordPid } from './pidfiles.ts';

/**
 * What a process does in the benchmark, for the CPU columns. `endpoint`: an endpoint server a
 * relay calls (`--modes relay`), reported apart from the system's own processes.
 */
export type Role = 'caller' | 'front' | 'sync' | 'workers' | 'redis' | 'endpoint';

/** A message between the orchestrator and a bench child over the IPC channel. */
export type ChildMessage = { type: string; [key: string]: unknown };

/** A Node child process started by {@link ChildSet.spawnNode}. */
export interface Child {
  readonly name: string;
  readonly role: Role;
  readonly pid: number;
  /** Resolves with the exit code (null after a signal). */
  readonly exited: Promise<number | null>;
  /** True once it exited. */
  hasExited(): boolean;
  /** The last lines it printed. */
  output(): string;
  /** Sends over the IPC channel (children started with `ipc`). */
  send(msg: ChildMessage): void;
  /** Resolves with the first message that `match` accepts; rejects if the child exits first or after `timeoutMs`. */
  next(match: (m: ChildMessage) => boolean, timeoutMs: number, what: string): Promise<ChildMessage>;
}

/** How to start a child. */
export interface SpawnNodeOptions {
  name: string;
  role: Role;
  /** Absolute path of the entry: a `.ts` source (run through tsx) or a built `.js`. */
  entry: string;
  env: Record<string, string>;
  /** Flags for node itself, before `--import tsx` (e.g. `--cpu-prof`). */
  nodeArgs?: readonly string[];
  /** Arguments of the entry, after it. */
  args?: readonly string[];
  /** Give it an IPC channel (bench children: messages, and they exit when it closes). */
  ipc?: boolean;
  /** Echo every output line with a `[name]` prefix. */
  echo?: boolean;
  /**
   * CPUs to run on, as `taskset -c` takes them (`0`, `1-3`): the child is started under taskset,
   * which execs node in place, so the pid is node's. @default every CPU
   */
  cpus?: string;
  /** Called with every line it prints, stdout and stderr (e.g. to read `--trace-gc`). */
  onLine?: (line: string) => void;
}

const OUTPUT_LINES = 80;

/** The `file:` URL of tsx's loader, for `node --import`. */
const tsxLoaderUrl = (): string =>
  pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * Every child process of one bench session. Children get their own process group, so a
 * terminal's Ctrl-C reaches only the orchestrator, which stops them by pid in reverse order of
 * start. Each pid is recorded in the session folder, so a later run can stop what a killed run
 * left behind.
 */
export class ChildSet {
  private readonly children: {
    child: Child;
    proc: ChildProcess;
    stop: (graceMs: number) => Promise<void>;
  }[] = [];

  /** Children frozen by {@link pause} (SIGSTOP) and not yet woken. */
  private readonly paused = new Set<number>();

  constructor(private readonly sessionDir: string) {}

  /**
   * Freezes a child with SIGSTOP (another system's run is being measured); idempotent. It keeps
   * its connections and state, and uses no CPU until {@link resume}.
   */
  pause(child: Child): void {
    if (child.hasExited() || this.paused.has(child.pid)) return;
    signal(child.pid, 'SIGSTOP');
    this.paused.add(child.pid);
  }

  /** Wakes a child {@link pause} froze (SIGCONT); true when it was frozen. */
  resume(child: Child): boolean {
    if (!this.paused.delete(child.pid)) return false;
    signal(child.pid, 'SIGCONT');
    return true;
  }

  /** Wakes every child {@link pause} froze. */
  resumeAll(): void {
    for (const { child } of this.children) this.resume(child);
  }

  /** Every child started so far, in start order. */
  list(): readonly Child[] {
    return this.children.map((c) => c.child);
  }

  /** Starts `node [nodeArgs] --import tsx entry.ts`, or `node [nodeArgs] --conditions=agent-reach-dist entry.js`. */
  async spawnNode(opts: SpawnNodeOptions): Promise<Child> {
    // TypeScript runs through tsx; a built `.js` entry resolves the workspace packages to their
    // dist, as the image runs it.
    const loader = opts.entry.endsWith('.ts')
      ? ['--import', tsxLoaderUrl()]
      : ['--conditions=agent-reach-dist'];
    const nodeArgv = [...(opts.nodeArgs ?? []), ...loader, opts.entry, ...(opts.args ?? [])];
    const proc = spawn(
      opts.cpus === undefined ? process.execPath : 'taskset',
      opts.cpus === undefined ? nodeArgv : ['-c', opts.cpus, process.execPath, ...nodeArgv],
      {
        env: { ...process.env, ...opts.env },
        stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    const lines: string[] = [];
    let partial = '';
    const onData = (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        opts.onLine?.(line);
        lines.push(line);
        if (lines.length > OUTPUT_LINES) lines.shift();
        if (opts.echo) process.stderr.write(`[${opts.name}] ${line}\n`);
      }
    };
    proc.stdout?.setEncoding('utf8').on('data', onData);
    proc.stderr?.setEncoding('utf8').on('data', onData);
    let done = false;
    const exited = new Promise<number | null>((resolve) => {
      proc.once('error', () => {
        if (proc.pid === undefined) {
          done = true;
          resolve(null);
        }
      });
      proc.once('close', (code) => {
        done = true;
        resolve(code);
      });
    });
    if (proc.pid === undefined) {
      await exited;
      throw new Error(`could not start ${opts.name}`);
    }
    const pid = proc.pid;
    await recordPid(this.sessionDir, opts.name, pid, opts.entry);
    const messages: ChildMessage[] = [];
    const waiters = new Set<() => void>();
    proc.on('message', (m: unknown) => {
      if (typeof m === 'object' && m !== null && typeof (m as ChildMessage).type === 'string') {
        messages.push(m as ChildMessage);
        for (const w of [...waiters]) w();
      }
    });
    const output = () => [...lines, ...(partial ? [partial] : [])].join('\n');
    const child: Child = {
      name: opts.name,
      role: opts.role,
      pid,
      exited,
      hasExited: () => done,
      output,
      send: (msg) => {
        if (!done && proc.connected) proc.send(msg);
      },
      next: (match, timeoutMs, what) =>
        new Promise<ChildMessage>((resolve, reject) => {
          const check = () => {
            const i = messages.findIndex(match);
            if (i >= 0) finish(undefined, messages.splice(i, 1)[0]);
          };
          const finish = (err?: Error, msg?: ChildMessage) => {
            waiters.delete(check);
            clearTimeout(timer);
            if (err) reject(err);
            else resolve(msg as ChildMessage);
          };
          const timer = setTimeout(
            () =>
              finish(
                new Error(`${opts.name}: no ${what} within ${timeoutMs} ms\n${tail(output())}`),
              ),
            timeoutMs,
          );
          waiters.add(check);
          void exited.then(() => {
            if (waiters.has(check))
              finish(new Error(`${opts.name} exited before ${what}\n${tail(output())}`));
          });
          check();
        }),
    };
    const stop = async (graceMs: number) => {
      if (done) return;
      // A frozen child would hold SIGTERM until woken.
      this.paused.delete(pid);
      signal(pid, 'SIGCONT');
      signal(pid, 'SIGTERM');
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
      if ((await Promise.race([exited, timer])) === 'timeout') {
        signal(pid, 'SIGKILL');
        await exited;
      }
    };
    this.children.push({ child, proc, stop });
    return child;
  }

  /** Stops every child by pid (SIGTERM, then SIGKILL after `graceMs`), newest first. Idempotent. */
  async stopAll(graceMs = 8000): Promise<void> {
    // Everyone awake first: an agent deregisters on its way out, from a registry that must answer.
    for (const { child } of this.children) this.resume(child);
    for (const { child, stop } of [...this.children].reverse()) {
      await stop(graceMs);
      await forgetPid(this.sessionDir, child.name);
    }
  }

  /** Last resort when the orchestrator is exiting now: SIGKILL whatever is still running. */
  killAllNow(): void {
    for (const { child } of this.children) if (!child.hasExited()) signal(child.pid, 'SIGKILL');
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function tail(text: string, n = 25): string {
  return text
    .trimEnd()
    .split('\n')
    .slice(-n)
    .map((l) => `    ${l}`)
    .join('\n');
}
