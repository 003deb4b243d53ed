import { fnv1a } from './keys.ts';

/**
 * Shadow traffic (docs/PROTOCOL.md §7): a share of a capability's real tasks mirrored to its
 * agents in observation mode, whose results are kept apart and compared with the serving agent's.
 * The shapes every component shares: the per-capability settings, the record of one shadow
 * result, and the comparison.
 */

/** How two results are compared: every path in `paths` only, or everything but `ignore`. */
export interface ShadowCompare {
  /** Only these JSON paths are compared (`answer`, `meta.model`, `items.0.id`). */
  paths?: string[];
  /** These JSON paths are left out of the comparison. */
  ignore?: string[];
}

/** A capability's shadow settings, as the operator API takes and returns them. */
export interface ShadowSettings {
  /** Share of the capability's tasks mirrored, 0–1. */
  rate: number;
  compare?: ShadowCompare;
}

/** One shadow copy's outcome, as kept with its observing agent (newest first). */
export interface ShadowRecord {
  task_id: string;
  capability: string;
  ok: boolean;
  /** The handler's time, as the agent reported it; absent when it sent none. */
  duration_ms?: number;
  /** The result, JSON text, cut at {@link MAX_SHADOW_RESULT_BYTES} (then `truncated`). */
  result?: string;
  truncated?: boolean;
  error_code?: string;
  /** When the outcome was applied, epoch ms. */
  at: number;
}

/** Longest result text kept per shadow record; a longer one is kept cut and compared as unequal. */
export const MAX_SHADOW_RESULT_BYTES = 16 * 1024;
/** Most paths one `compare` list may name. */
export const MAX_COMPARE_PATHS = 50;
/** A comparison path: dot-separated keys or array indexes. */
export const COMPARE_PATH = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+){0,15}$/;

/**
 * Whether a task is mirrored at `rate`: a function of its id, so every router and every resend
 * of the same task decide the same way (FNV-1a of the id over 2^32).
 */
export function shadowPicked(taskId: string, rate: number): boolean {
  if (!(rate > 0)) return false;
  if (rate >= 1) return true;
  let h = fnv1a(taskId);
  // Mixed once more: FNV's low bits follow the last characters of near-identical ids.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h >>> 0) / 0x100000000 < rate;
}

function at(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function without(value: unknown, path: string[]): unknown {
  if (value === null || typeof value !== 'object' || path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(value)) {
    const copy: unknown[] = [...(value as unknown[])];
    const i = Number(head);
    if (Number.isInteger(i) && i >= 0 && i < copy.length) {
      if (rest.length === 0) copy[i] = undefined;
      else copy[i] = without(copy[i], rest);
    }
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (!Object.hasOwn(copy, head)) return copy;
  if (rest.length === 0) delete copy[head];
  else copy[head] = without(copy[head], rest);
  return copy;
}

/** Deep equality of JSON values (object key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) =>
      Object.hasOwn(b, k) &&
      jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** What comparing two results found: agreement, and the paths that differ (for `paths`). */
export interface Comparison {
  agree: boolean;
  /** With `compare.paths`: the paths that differ; otherwise empty. */
  differing: string[];
}

/**
 * Compares an observing agent's result with the serving agent's: JSON-equal by default; with
 * `compare.paths` only those paths; with `compare.ignore` all but those paths.
 */
export function compareResults(
  observed: unknown,
  served: unknown,
  compare: ShadowCompare = {},
): Comparison {
  if (compare.paths && compare.paths.length > 0) {
    const differing = compare.paths.filter((p) => !jsonEqual(at(observed, p), at(served, p)));
    return { agree: differing.length === 0, differing };
  }
  let a = observed;
  let b = served;
  for (const p of compare.ignore ?? []) {
    a = without(a, p.split('.'));
    b = without(b, p.split('.'));
  }
  return { agree: jsonEqual(a, b), differing: [] };
}

/** Checks operator input for a capability's shadow settings; the error names the bad field. */
export function checkShadowSettings(
  input: unknown,
): { ok: true; value: ShadowSettings } | { ok: false; error: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { ok: false, error: 'body must be an object with rate' };
  const o = input as Record<string, unknown>;
  const rate = o.rate;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > 1)
    return { ok: false, error: 'rate must be a number from 0 to 1' };
  const value: ShadowSettings = { rate };
  if (o.compare !== undefined) {
    const c = o.compare;
    if (typeof c !== 'object' || c === null || Array.isArray(c))
      return { ok: false, error: 'compare must be an object with paths or ignore' };
    const cc = c as Record<string, unknown>;
    const compare: ShadowCompare = {};
    for (const field of ['paths', 'ignore'] as const) {
      const list = cc[field];
      if (list === undefined) continue;
      if (
        !Array.isArray(list) ||
        list.length > MAX_COMPARE_PATHS ||
        !list.every((p) => typeof p === 'string' && COMPARE_PATH.test(p))
      )
        return {
          ok: false,
          error: `compare.${field} must be at most ${MAX_COMPARE_PATHS} dot paths like "meta.model"`,
        };
      compare[field] = list as string[];
    }
    if (compare.paths && compare.ignore)
      return { ok: false, error: 'compare takes paths or ignore, not both' };
    if (compare.paths || compare.ignore) value.compare = compare;
  }
  return { ok: true, value };
}

/** Reads a stored settings value (the `keys.shadowSettings()` hash); undefined when unreadable. */
export function decodeShadowSettings(text: string | null | undefined): ShadowSettings | undefined {
  if (!text) return undefined;
  try {
    const checked = checkShadowSettings(JSON.parse(text));
    return checked.ok ? checked.value : undefined;
  } catch {
    return undefined;
  }
}
