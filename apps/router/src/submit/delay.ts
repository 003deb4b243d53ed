import { MAX_DELAY_MS, type SubmitBody } from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';

/**
 * When a submission asks to be sent (epoch ms), or undefined to send it at once: `delay_ms`
 * after `now`, or `run_at`. A `delay_ms` of 0 and a `run_at` not after `now` mean at once.
 * Throws INVALID_DELAY for both at once, a `run_at` more than MAX_DELAY_MS ahead, and a delay
 * with `mode: "batch"` or `on_no_agent: "queue"` (a delayed task is sent like a retry, to a live
 * agent, never put in a pool).
 */
export function delayedUntil(body: SubmitBody, now: number): number | undefined {
  const { delay_ms: delayMs, run_at: runAt } = body;
  if (delayMs === undefined && runAt === undefined) return undefined;
  if (delayMs !== undefined && runAt !== undefined) {
    throw httpError('INVALID_DELAY', 'give delay_ms or run_at, not both');
  }
  const at = runAt ?? now + (delayMs ?? 0);
  if (at > now + MAX_DELAY_MS) {
    throw httpError(
      'INVALID_DELAY',
      `run_at is more than ${MAX_DELAY_MS} ms (30 days) ahead; use a schedule for later`,
    );
  }
  if (at <= now) return undefined;
  if (body.mode === 'batch' || body.on_no_agent === 'queue') {
    throw httpError(
      'INVALID_DELAY',
      'a delayed task is sent to a live agent when due, never pooled: leave mode: "batch" and on_no_agent: "queue" out',
    );
  }
  return at;
}
