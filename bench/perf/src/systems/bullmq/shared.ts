import { env } from '../../load/child.ts';

/** The one queue of the bench session. */
export const QUEUE = 'bench';

/**
 * Queue options as BullMQ's docs recommend for production ("Auto-removal of jobs"; the events
 * stream trimmed below its default ~10,000 entries). The caller's jobs are removed as soon as
 * they finish (`true`): their results reach it in the `completed` event, and in a 15,000-task
 * flood this cost BullMQ the least Redis CPU of the three ways (0.131–0.179 ms per task, against
 * 0.150–0.181 keeping every job and 0.166–0.206 keeping the last 1,000). The gateway keeps the last
 * 1,000 (the docs' "good practice"): `waitUntilFinished` checks the job's state after it starts
 * listening, and a job already removed reads as missing, which fails the request. Every reader
 * of the events stream runs only in the modes that use it and reads all that is new each time;
 * a flood writes about four events per job.
 */
const EVENTS = { streams: { events: { maxLen: 2000 } } };

/** The caller's queue (flood and paced): finished jobs removed at once. */
export const CALLER_QUEUE_OPTIONS = {
  ...EVENTS,
  defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
};

/** The gateway's queue (http): the last 1,000 completed and 5,000 failed jobs kept. */
export const GATEWAY_QUEUE_OPTIONS = {
  ...EVENTS,
  defaultJobOptions: { removeOnComplete: { count: 1000 }, removeOnFail: { count: 5000 } },
};

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
