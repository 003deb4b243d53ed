import { env } from '../../load/child.ts';

/** The one queue of the bench session. */
export const QUEUE = 'bench';

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
