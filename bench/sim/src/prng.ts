import { hash32, mulberry32 as seededRandom } from '@agent-reach/dispatch';

/** A source of uniform numbers in [0, 1), like `Math.random` but seeded. */
export type Random = () => number;

/** mulberry32 (from the dispatch package): the same seed gives the same sequence on every machine. */
export const mulberry32: (seed: number) => Random = seededRandom;

/**
 * A seed for one named stream of a run (`"arrivals"`, `"policy"`…), so that streams are
 * independent and adding a draw to one does not shift the numbers another sees.
 */
export function deriveSeed(seed: number, label: string): number {
  return hash32(label, seed);
}

/** A seeded generator for the stream `label` of run `seed`. */
export function streamOf(seed: number, label: string): Random {
  return mulberry32(deriveSeed(seed, label));
}

/** Uniform in [lo, hi). */
export function uniform(rng: Random, lo: number, hi: number): number {
  return lo + (hi - lo) * rng();
}

/** Uniform integer in [lo, hi] (both included). */
export function intBetween(rng: Random, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

/** Exponential with the given mean: the gap between arrivals of a Poisson process. */
export function exponential(rng: Random, mean: number): number {
  // 1 - u is in (0, 1], so the log is finite.
  return -mean * Math.log(1 - rng());
}

/** Standard normal by Box–Muller (uses two draws, keeps one, so draws stay in step). */
export function standardNormal(rng: Random): number {
  const u1 = 1 - rng();
  const u2 = rng();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** Lognormal given its median and the sigma of the underlying normal. */
export function lognormal(rng: Random, median: number, sigma: number): number {
  return median * Math.exp(sigma * standardNormal(rng));
}

/** Pareto (type I) with scale `min` and shape `alpha`: heavy-tailed, never below `min`. */
export function pareto(rng: Random, min: number, alpha: number): number {
  return min / Math.pow(1 - rng(), 1 / alpha);
}

/** Fisher–Yates shuffle of a copy. */
export function shuffled<T>(rng: Random, items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    const tmp = out[i] as T;
    out[i] = out[j] as T;
    out[j] = tmp;
  }
  return out;
}
