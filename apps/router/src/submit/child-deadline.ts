/** What a submission's timeout comes to once its parent's deadline is taken into account. */
export type ChildTimeout = { ok: true; timeoutMs: number } | { ok: false; leftMs: number };

/**
 * The timeout of a task, ms (0 for none): its own (`ownMs`, the caller's `timeout_s` or the
 * default), kept inside its parent's deadline less `marginMs` so the parent hears back before
 * its own deadline — the shorter of the two wins. A parent without a deadline (0) leaves the
 * task's own. A parent with `marginMs` or less left refuses the task (`ok: false`), with the time
 * the parent has left. `nowMs` is Redis time, as the parent's deadline is.
 */
export function childTimeout(
  ownMs: number,
  parentDeadlineMs: number,
  marginMs: number,
  nowMs: number,
): ChildTimeout {
  if (!(parentDeadlineMs > 0)) return { ok: true, timeoutMs: ownMs };
  const capMs = Math.floor(parentDeadlineMs - marginMs - nowMs);
  if (capMs <= 0) return { ok: false, leftMs: Math.max(0, Math.floor(parentDeadlineMs - nowMs)) };
  return { ok: true, timeoutMs: ownMs > 0 ? Math.min(ownMs, capMs) : capMs };
}
