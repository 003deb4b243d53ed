import type { RegisterReply } from '@agent-reach/protocol';
import type { Logger } from 'pino';

/** Execution lease the registry grants when its register reply does not say (REACH_EXEC_LEASE_MS' default). */
export const DEFAULT_EXEC_LEASE_MS = 60_000;

/** What lease renewal needs from the agent. */
export interface LeaseRenewalsContext {
  /** The current registration: its `exec_lease_ms` sets the pace. */
  session(): RegisterReply | undefined;
  /** The ids of the tasks whose handlers run now. */
  running(): string[];
  /** Writes one `renew` ack for all of them (AckWriter.renew). */
  renew(taskIds: readonly string[]): Promise<void>;
  logger: Logger;
}

/**
 * Renews the execution leases of the agent's running tasks while their handlers run: every third
 * of the lease (the register reply's `exec_lease_ms`), one `renew` ack for all of them, so a
 * handler that runs long keeps its task and a hung process loses it (docs/PROTOCOL.md §4).
 * Runs on its own timer; nothing is sent while no handler runs.
 */
export class LeaseRenewals {
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;

  constructor(private readonly ctx: LeaseRenewalsContext) {}

  /** How often leases are renewed now: a third of the lease. */
  get intervalMs(): number {
    return Math.max(
      100,
      Math.floor((this.ctx.session()?.exec_lease_ms ?? DEFAULT_EXEC_LEASE_MS) / 3),
    );
  }

  /** Starts renewing (again); does nothing while running. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule();
  }

  /** Stops renewing; the leases of tasks still running then lapse on the server. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), this.intervalMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    const ids = this.ctx.running();
    try {
      if (ids.length > 0) await this.ctx.renew(ids);
    } catch (err: unknown) {
      // The next renewal comes in a third of the lease: two can fail before it lapses.
      this.ctx.logger.warn(
        { err, tasks: ids.length },
        'lease renewal failed; trying again at the next one',
      );
    } finally {
      this.#schedule();
    }
  }
}
