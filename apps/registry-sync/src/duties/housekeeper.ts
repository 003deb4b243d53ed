import type { Logger } from 'pino';
import type { LeaseLock } from './lease-lock.ts';
import type { LeaseSweeper, Transition } from './lease-sweeper.ts';
import type { SnapshotWriter } from './snapshot-writer.ts';

/** Timing of the housekeeping duties. */
export interface HousekeeperSettings {
  sweepIntervalMs: number;
  snapshotIntervalMs: number;
}

type State = 'idle' | 'running' | 'closed';

/**
 * Runs the duties that must happen once across registry-sync instances — lease sweeps and the
 * periodic snapshot — while holding the lease lock; any instance may also write a snapshot at
 * once after a registration so routers learn of new agents without waiting.
 */
export class Housekeeper {
  private state: State = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private lastSnapshotAt = 0;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly lock: LeaseLock,
    private readonly sweeper: LeaseSweeper,
    private readonly snapshots: SnapshotWriter,
    private readonly settings: HousekeeperSettings,
    private readonly log: Logger,
    private readonly onTransition: (t: Transition) => void = () => {},
  ) {}

  /** Starts the timer. */
  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'running';
    this.schedule(0);
  }

  /**
   * Writes a snapshot now, e.g. after a registration, so routers learn of it before the agent
   * gets its reply. A failure is logged, not thrown: the periodic snapshot follows anyway.
   */
  async writeSnapshotNow(): Promise<void> {
    if (this.state === 'closed') return;
    try {
      await this.snapshots.write();
    } catch (err: unknown) {
      this.log.warn({ err }, 'snapshot write failed');
    }
  }

  /** Stops the timer, waits for a running pass and releases the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.lock.release().catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.state !== 'running') return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => this.schedule(this.settings.sweepIntervalMs));
    }, delayMs);
  }

  private async tick(): Promise<void> {
    try {
      if (!(await this.lock.hold())) return;
      const transitions = await this.sweeper.sweep();
      for (const t of transitions) {
        this.log.info({ agent_id: t.agent_id, from: t.from, to: t.to, lease_age_ms: t.lease_age_ms }, 'agent status changed');
        this.onTransition(t);
      }
      const now = Date.now();
      if (transitions.length > 0 || now - this.lastSnapshotAt >= this.settings.snapshotIntervalMs) {
        await this.snapshots.write();
        this.lastSnapshotAt = now;
      }
    } catch (err: unknown) {
      this.log.warn({ err }, 'housekeeping pass failed');
    }
  }
}
