import { CronExpressionParser } from 'cron-parser';

/** When a schedule fires: a cron expression read in a time zone, or every `everyMs` from `anchorMs`. */
export type Cadence =
  | { cron: string; timezone: string }
  | {
      everyMs: number;
      /** Ticks are `anchorMs + k × everyMs` (the schedule's creation time). */
      anchorMs: number;
    };

/** What is wrong with a cadence's cron expression or time zone, or undefined when it is usable. */
export function cadenceProblem(c: Cadence): string | undefined {
  if (!('cron' in c)) return undefined;
  try {
    // Throws RangeError on a time zone the runtime does not know.
    new Intl.DateTimeFormat('en-US', { timeZone: c.timezone });
  } catch {
    return `unknown time zone ${JSON.stringify(c.timezone)}: use an IANA name such as Europe/Paris or UTC`;
  }
  try {
    CronExpressionParser.parse(c.cron, { tz: c.timezone, strict: false }).next();
  } catch (err: unknown) {
    return `cron ${JSON.stringify(c.cron)} is not valid: ${(err as Error).message}`;
  }
  return undefined;
}

/** The first tick strictly after `afterMs`. */
export function nextTick(c: Cadence, afterMs: number): number {
  if ('cron' in c) {
    return CronExpressionParser.parse(c.cron, { tz: c.timezone, currentDate: new Date(afterMs) })
      .next()
      .getTime();
  }
  if (afterMs < c.anchorMs) return c.anchorMs;
  return c.anchorMs + (Math.floor((afterMs - c.anchorMs) / c.everyMs) + 1) * c.everyMs;
}

/**
 * The latest tick at or before `atMs`, and not before `fromMs` (a tick known to be due): the one
 * a leader fires when it finds ticks missed — older missed ticks are skipped.
 */
export function latestTick(c: Cadence, fromMs: number, atMs: number): number {
  if (atMs <= fromMs) return fromMs;
  if ('cron' in c) {
    const prev = CronExpressionParser.parse(c.cron, {
      tz: c.timezone,
      currentDate: new Date(atMs + 1),
    })
      .prev()
      .getTime();
    return Math.max(prev, fromMs);
  }
  return fromMs + Math.floor((atMs - fromMs) / c.everyMs) * c.everyMs;
}
