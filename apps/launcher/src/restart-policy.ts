/** Options of {@link RestartPolicy}. */
export interface RestartPolicyOptions {
  /** Exits of one service within {@link windowMs} that make a crash loop. @default 5 */
  maxExits?: number;
  /** @default 60000 */
  windowMs?: number;
}

/** How a child ended: its exit code, or the signal that ended it. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What to do about a service that exited on its own. */
export type ExitDecision =
  /** A failure (non-zero code, or a signal): start it again; `exits` counts this one. */
  | { action: 'restart'; exits: number }
  /** The `maxExits`-th failure within the window: stop everything. */
  | { action: 'crash-loop'; exits: number }
  /** Exit code 0: it chose to stop (SIGTERM from outside, a fenced agent stepping down). */
  | { action: 'leave' };

/**
 * `npm start`'s rule for a service that exits while the stack runs (systemd's
 * `Restart=on-failure` with a start limit): a failure is restarted at once, unless it is the
 * service's `maxExits`-th failure within `windowMs` — a crash loop, which restarting would only
 * repeat. Exit code 0 is not a failure: the echo agent exits 0 when fenced precisely so that a
 * supervisor does not start another instance.
 */
export class RestartPolicy {
  readonly maxExits: number;
  readonly windowMs: number;
  private readonly failures = new Map<string, number[]>();

  constructor(opts: RestartPolicyOptions = {}) {
    this.maxExits = opts.maxExits ?? 5;
    this.windowMs = opts.windowMs ?? 60_000;
  }

  /** Records the exit of `name` at `now` and says what to do. */
  decide(name: string, status: ExitStatus, now = Date.now()): ExitDecision {
    if (status.code === 0 && status.signal === null) return { action: 'leave' };
    const recent = (this.failures.get(name) ?? []).filter((t) => now - t < this.windowMs);
    recent.push(now);
    this.failures.set(name, recent);
    return recent.length >= this.maxExits
      ? { action: 'crash-loop', exits: recent.length }
      : { action: 'restart', exits: recent.length };
  }

  /** `(2 of 5 in 60 s)`: how close a service is to the crash-loop rule. */
  describe(exits: number): string {
    return `(${exits} of ${this.maxExits} in ${Math.round(this.windowMs / 1000)} s)`;
  }
}

/** `exited with code 1` or `was killed by SIGKILL`, for the launcher's messages. */
export function describeExitStatus(status: ExitStatus): string {
  return status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
}
