import type { Logger } from 'pino';

/** Warns at most once per `intervalMs` for each kind; the next line says how many were held back. */
export class RateLimitedLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  /**
   * @param logger - the module's child logger.
   * @param intervalMs - least time between two lines of one kind.
   */
  constructor(
    readonly logger: Logger,
    private readonly intervalMs = 10_000,
  ) {}

  /**
   * Logs `msg` at warn with `ctx` unless a line of this `kind` was logged within the interval.
   * @returns whether the line was logged.
   */
  warn(kind: string, ctx: Record<string, unknown>, msg: string): boolean {
    const now = Date.now();
    const seen = this.last.get(kind);
    if (seen && now - seen.at < this.intervalMs) {
      seen.suppressed++;
      return false;
    }
    const suppressed = seen?.suppressed ?? 0;
    this.last.set(kind, { at: now, suppressed: 0 });
    this.logger.warn(suppressed > 0 ? { ...ctx, kind, suppressed } : { ...ctx, kind }, msg);
    return true;
  }
}
