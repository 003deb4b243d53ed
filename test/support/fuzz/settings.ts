/**
 * The fuzz's knobs, from the environment: `REACH_FUZZ_COUNT` requests per OpenAPI endpoint in
 * each of the two legs (open, keys required): 1,000 in `npm test`, so 2,000 per endpoint in all,
 * and 10,000 in `npm run fuzz`; `REACH_FUZZ_RPC_COUNT` requests per method of the protocol edges
 * (A2A and MCP JSON-RPC methods and tools, event streams' `Last-Event-ID`, registration cards):
 * 200 in `npm test`, 2,000 in `npm run fuzz`, and `REACH_FUZZ_ID_COUNT` per method that takes a
 * task id (five times as many unless set); `REACH_FUZZ_SEED` (a number, or `random`);
 * `REACH_FUZZ_CONCURRENCY` requests in flight; `REACH_FUZZ_ONLY` a regular expression that picks
 * the endpoints (`<service> METHOD /path`, e.g. `router POST /v1/tasks`, or a method of an edge,
 * e.g. `router a2a (GetTask|tasks/get)`) to fuzz instead of all.
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

/** Requests per JSON-RPC method, tool or other protocol edge in each leg. */
export const FUZZ_RPC_COUNT = Number(process.env.REACH_FUZZ_RPC_COUNT ?? 200);

/** Requests per protocol-edge method that takes a task id (ids are where the bugs were). */
export const FUZZ_ID_COUNT = Number(process.env.REACH_FUZZ_ID_COUNT ?? FUZZ_RPC_COUNT * 5);

/** Requests in flight at once. */
export const FUZZ_CONCURRENCY = Number(process.env.REACH_FUZZ_CONCURRENCY ?? 16);

/**
 * How long a leg may take: a backstop only (each request has its own deadline), generous for
 * two cores busy with other work, and growing with the count for `npm run fuzz`.
 */
export const LEG_TIMEOUT_MS = 300_000 + FUZZ_COUNT * 600;

/** The same backstop for the protocol-edge leg (about 40 methods, most of them taking ids). */
export const EDGE_TIMEOUT_MS = 300_000 + (FUZZ_RPC_COUNT + FUZZ_ID_COUNT) * 60;

const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url));

/** Writes a leg's figures to test/artifacts/<name>.txt (kept out of git). */
export function saveFigures(name: string, text: string): void {
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(`${ARTIFACTS}${name}.txt`, text + '\n');
}
