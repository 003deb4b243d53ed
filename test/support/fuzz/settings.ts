/**
 * The fuzz's knobs, from the environment: `REACH_FUZZ_COUNT` requests per endpoint in each of
 * the two legs (open, keys required): 1,000 in `npm test`, so 2,000 per endpoint in all, and
 * 10,000 in `npm run fuzz`; `REACH_FUZZ_SEED` (a number, or `random`); `REACH_FUZZ_CONCURRENCY`
 * requests in flight; `REACH_FUZZ_ONLY` a regular expression that picks the endpoints
 * (`<service> METHOD /path`, e.g. `router POST /v1/tasks`) to fuzz instead of all.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Requests per endpoint in each leg. */
export const FUZZ_COUNT = Number(process.env.REACH_FUZZ_COUNT ?? 1000);

/** The fast-check seed of the run; printed with the figures so a failure can be replayed. */
export const FUZZ_SEED =
  process.env.REACH_FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.REACH_FUZZ_SEED ?? 20_261_201);

/** Only the endpoints whose `<service> METHOD /path` matches, when set. */
export const FUZZ_ONLY = process.env.REACH_FUZZ_ONLY
  ? new RegExp(process.env.REACH_FUZZ_ONLY)
  : undefined;

/** Requests in flight at once. */
export const FUZZ_CONCURRENCY = Number(process.env.REACH_FUZZ_CONCURRENCY ?? 16);

/**
 * How long a leg may take: a backstop only (each request has its own deadline), generous for
 * two cores busy with other work, and growing with the count for `npm run fuzz`.
 */
export const LEG_TIMEOUT_MS = 300_000 + FUZZ_COUNT * 600;

const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url));

/** Writes a leg's figures to test/artifacts/<name>.txt (kept out of git). */
export function saveFigures(name: string, text: string): void {
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(`${ARTIFACTS}${name}.txt`, text + '\n');
}
