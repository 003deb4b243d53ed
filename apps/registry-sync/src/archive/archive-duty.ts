import type { Logger } from 'pino';
import type { LeaseLock } from '@agent-reach/dispatch';
import type { ArchivePass, TaskArchiver } from './task-archiver.ts';

/** The archive duty's settings. */
export interface ArchiveDutySettings {
  /** How often a pass runs (sooner while a pass finds full batches). */
  archiveIntervalMs: number;
}

/** What the archive duty needs. */
export interface ArchiveDutyOptions {
  archiver: TaskArchiver;
  /** The duty's own lease lock: one instance archives at a time. */
  lock: LeaseLock;
  settings: ArchiveDutySettings;
  logger: Logger;
}

/** Longest wait between passes while InfluxDB stays away. */
const MAX_BACKOFF_MS = 10_000;

type State = 'idle' | 'running' | 'closed';

/**
 * Runs the archiver on the instance holding the archive lock: a pass every `archiveIntervalMs`,
 * the next at once while batches come full, and a doubling wait (up to 10 s) while InfluxDB is
 * away. Off the hot path: dispatch never waits for it.
 */
export class ArchiveDuty {
  private state: State = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private failures = 0;
  private readonly log: Logger;

  constructor(private readonly o: ArchiveDutyOptions) {
    this.log = o.logger.child({ module: 'archive' });
  }

  /** Starts the loop. */
  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'running';
    this.schedule(0);
  }

  /** One pass if this instance holds the lock; undefined otherwise. Never rejects. */
  async tick(): Promise<ArchivePass | undefined> {
    try {
      if (!(await this.o.lock.hold())) return undefined;
      const pass = await this.o.archiver.pass();
      this.failures = pass.blocked ? this.failures + 1 : 0;
      return pass;
    } catch (err: unknown) {
      this.failures++;
      this.log.warn({ err }, 'archive pass failed');
      return undefined;
    }
  }

  /** Idempotent: stops the loop after the pass under way and gives the lock up. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.state = 'closed';
      clearTimeout(this.timer);
      await this.running;
      await this.o.lock.release().catch(() => undefined);
    })();
    return this.closing;
  }

  private schedule(ms: number): void {
    if (this.state !== 'running') return;
    this.timer = setTimeout(() => {
      this.running = this.tick().then((pass) => {
        const interval = this.o.settings.archiveIntervalMs;
        const wait =
          this.failures > 0
            ? Math.min(interval * 2 ** Math.min(this.failures, 10), MAX_BACKOFF_MS)
            : pass?.more
              ? 0
              : interval;
        this.schedule(wait);
      });
    }, ms);
    this.timer.unref();
  }
}
