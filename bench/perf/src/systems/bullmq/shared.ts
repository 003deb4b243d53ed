import { env } from '../../load/child.ts';

/** The one queue of the bench session. */
export const QUEUE = 'bench';

/**
 * Queue options as BullMQ's docs recommend for production throughput ("Auto-removal of jobs":
 * keep a handful of completed jobs and more failed ones, rather than every one; the events
 * stream trimmed below its default ~10,000). A job is still kept long after its `completed`
 * event, so `waitUntilFinished` finds it finished however late it asks (with `true`, a job
 * already removed would read as missing). The events stream must hold what a reader may fall
 * behind by: every reader runs only in the modes that use it and reads all that is new at each
 * read, and a flood writes about 4 events per job.
 */
export const QUEUE_OPTIONS = {
  defaultJobOptions: { removeOnComplete: { count: 1000 }, removeOnFail: { count: 5000 } },
  streams: { events: { maxLen: 2000 } },
} as const;

/** BullMQ connection options from REDIS_URL (BullMQ creates its own ioredis clients). */
export function connection(): { host: string; port: number } {
  const url = new URL(env('REDIS_URL'));
  return { host: url.hostname, port: Number(url.port || 6379) };
}

/** What the bench's no-op processor returns: the task key and when it started the job. */
export interface BenchReturn {
  k: string;
  r: number;
}

/** QueueEvents gives the return value parsed, but older releases gave the JSON text. */
export function parseReturn(value: unknown): BenchReturn | undefined {
  const v: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  if (typeof v === 'object' && v !== null && typeof (v as BenchReturn).k === 'string')
    return v as BenchReturn;
  return undefined;
}
