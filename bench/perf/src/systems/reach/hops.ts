import { streamIdMs } from '@agent-reach/protocol';

/**
 * Where an Agent-Reach task's time goes between its submission and the caller holding its result,
 * hop by hop, from marks the task gathers on its way:
 *
 * - **submit**: the caller's clock as it writes the task into a request;
 * - **sent**: the id of the agent's inbox entry (Redis' clock at the router's `XADD`), which the
 *   handler reads from `ctx.messageId`;
 * - **started**: the agent's clock as the handler starts;
 * - **acked**: the callback item's `completed_at`, the id of the agent's ack entry (Redis' clock
 *   at the agent's `XADD`);
 * - **published**: the callback item's `id` (Redis' clock at registry-sync's `XADD`);
 * - **held**: the caller's clock as the long-poll's answer is read.
 *
 * Every clock is this machine's wall clock read in milliseconds (`Date.now()`, Redis' `TIME`), so
 * each hop is good to about a millisecond: enough to see which hop holds a tail of tens.
 */
export const HOPS = [
  'submit → sent',
  'sent → started',
  'started → acked',
  'acked → published',
  'published → held',
] as const;

/** What the bench agent's handler returns beside `r`: its start (epoch ms) and `ctx.messageId`. */
export interface StartMarks {
  e?: number;
  m?: string;
}

/** The marks of one task, epoch ms, and stream entry ids. */
export interface HopMarks {
  submittedAt: number;
  sentId: string;
  startedAt: number;
  ackedAt: number;
  publishedId: string;
  heldAt: number;
}

/** Each hop's time, ms; undefined when a mark is missing. */
export function hopsOf(m: HopMarks): Record<string, number> | undefined {
  const times = [
    m.submittedAt,
    streamIdMs(m.sentId),
    m.startedAt,
    m.ackedAt,
    streamIdMs(m.publishedId),
    m.heldAt,
  ];
  if (!times.every((t) => Number.isFinite(t) && t > 0)) return undefined;
  const hops: Record<string, number> = {};
  HOPS.forEach((hop, i) => (hops[hop] = (times[i + 1] as number) - (times[i] as number)));
  return hops;
}
