/**
 * registry-sync's housekeeping passes (`reach_housekeeping_passes_total` on its /metrics) as the
 * proof a negative check waits for. "Nothing was taken back", "no tick fired", "nobody went
 * OFFLINE" mean something only once registry-sync has swept after the moment that matters, so
 * such a check waits for passes begun after that moment instead of sleeping a fixed time.
 */
import { waitFor } from '@agent-reach/testkit';

/** `full`: every duty ran; `grace`: right after a stall, leases got the time back. */
export type PassKind = 'full' | 'grace';

/** Where registry-sync listens, and the headers its /metrics needs (an admin key, when required). */
export interface PassSource {
  registryUrl: string;
  headers?: Record<string, string>;
}

const PASSES = /^reach_housekeeping_passes_total\{([^}]*)\} (\d+)$/gm;

/** Passes of `kind` the registry-sync process at `source` completed as the leader so far. */
export async function passesOf(source: PassSource, kind: PassKind = 'full'): Promise<number> {
  const res = await fetch(`${source.registryUrl}/metrics`, { headers: source.headers ?? {} });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${text}`);
  for (const [, labels, value] of text.matchAll(PASSES))
    if (labels?.includes(`kind="${kind}"`)) return Number(value);
  throw new Error('GET /metrics has no reach_housekeeping_passes_total');
}

/** Options of {@link morePasses}. */
export interface MorePassesOptions {
  kind?: PassKind;
  /** Counted from this many passes instead of those completed at the call. */
  from?: number;
  timeoutMs?: number;
  message?: string;
}

/**
 * Resolves, with the new count, once registry-sync has completed `n` more passes of `kind` than
 * it had at the call (or than `from`). With `n` ≥ 2 at least one of them began after the call: a
 * pass under way at the call is the first one counted. Each pass takes its time (`now`) when it
 * begins, so that pass saw every deadline that had passed by the call.
 */
export async function morePasses(
  source: PassSource,
  n = 2,
  opts: MorePassesOptions = {},
): Promise<number> {
  const kind = opts.kind ?? 'full';
  const from = opts.from ?? (await passesOf(source, kind));
  return waitFor(
    async () => {
      const now = await passesOf(source, kind);
      return now >= from + n ? now : undefined;
    },
    {
      timeoutMs: opts.timeoutMs ?? 15_000,
      intervalMs: 25,
      message: opts.message ?? `registry-sync did not complete ${n} more ${kind} passes`,
    },
  );
}

/** Resolves at `atMs` (epoch ms): a deadline the system keeps, not a guess at how long work takes. */
export async function reached(atMs: number): Promise<void> {
  const left = atMs - Date.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
}
