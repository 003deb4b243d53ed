/**
 * A fuzz campaign: a given number of requests for every target (an OpenAPI operation, a JSON-RPC
 * method, …), generated with fast-check from a seed and sent with bounded concurrency, the
 * targets interleaved evenly so that requests to different endpoints race each other as real
 * clients' would. Every 100 requests, and at the end, each service's `/livez` must answer.
 */
import fc from 'fast-check';
import { Figures } from './figures.ts';
import { operationKey, type Operation } from './operations.ts';
import { requestArb, type FuzzRequest, type RequestOptions } from './requests.ts';
import { Sender, type RequestSender } from './send.ts';

/** What a campaign fuzzes: one endpoint, method or tool, and how many requests it gets. */
export interface FuzzTarget {
  /** `<service> <what>` (`router a2a GetTask`): the key of its figures and of REACH_FUZZ_ONLY. */
  key: string;
  /** Where its requests go over HTTP (`http://127.0.0.1:<port>`). */
  baseUrl: string;
  count: number;
  arb: fc.Arbitrary<FuzzRequest>;
  /** Sends its requests some other way than HTTP to `baseUrl` (a process's stdin). */
  sender?: RequestSender;
}

/** Options of {@link runCampaign}. */
export interface CampaignOptions {
  targets: FuzzTarget[];
  /** Requests in flight at once (per run, over all services). */
  concurrency: number;
  /** fast-check seed: the same seed generates the same requests. */
  seed: number;
  /** `service name → base URL` of every service whose `/livez` is checked. */
  livez?: Record<string, string>;
  /** Stops sending early (a service exited): the campaign ends with what it counted. */
  stopped?: () => boolean;
  /** Counts into these figures (an exit seen by the caller is recorded in them too). */
  figures?: Figures;
}

/** Requests are generated this many at a time per target, to bound memory. */
const CHUNK = 100;
/** Each service's `/livez` is checked after this many requests. */
const LIVEZ_EVERY = 100;
const LIVEZ_TIMEOUT_MS = 5000;

/** The targets of OpenAPI operations, `count` requests each. */
export function operationTargets(
  ops: Operation[],
  count: number,
  requestOptions: (op: Operation) => RequestOptions,
): FuzzTarget[] {
  return ops.map((op) => ({
    key: operationKey(op),
    baseUrl: op.baseUrl,
    count,
    arb: requestArb(op, requestOptions(op)),
  }));
}

/** Runs the campaign and returns its figures. */
export async function runCampaign(opts: CampaignOptions): Promise<Figures> {
  const figures = opts.figures ?? new Figures();
  const senders = new Map<string, Sender>();
  const senderFor = (t: FuzzTarget): RequestSender => {
    if (t.sender) return t.sender;
    let s = senders.get(t.baseUrl);
    if (!s) senders.set(t.baseUrl, (s = new Sender(t.baseUrl, opts.concurrency)));
    return s;
  };
  const queue = interleave(opts);
  let sent = 0;
  const worker = async () => {
    for (let next = queue.next(); !next.done; next = queue.next()) {
      if (opts.stopped?.()) return;
      const [target, req] = next.value;
      const out = await senderFor(target).send(req);
      figures.record(target.key, req, out);
      if (++sent % LIVEZ_EVERY === 0) await checkLivez(opts.livez, figures);
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
    if (!opts.stopped?.()) await checkLivez(opts.livez, figures);
  } finally {
    for (const s of senders.values()) s.close();
  }
  figures.durationMs = performance.now() - figures.startedAt;
  return figures;
}

async function checkLivez(
  services: Record<string, string> | undefined,
  figures: Figures,
): Promise<void> {
  await Promise.all(
    Object.entries(services ?? {}).map(async ([name, base]) => {
      try {
        const res = await fetch(`${base}/livez`, { signal: AbortSignal.timeout(LIVEZ_TIMEOUT_MS) });
        await res.arrayBuffer();
        figures.recordLivez(name, res.status === 200 ? undefined : `/livez answered ${res.status}`);
      } catch (err: unknown) {
        figures.recordLivez(name, `/livez did not answer: ${(err as Error).message}`);
      }
    }),
  );
}

/**
 * The requests of every target, spread evenly over the run: in each round a target sends its
 * share (one per round when all counts are equal, as the OpenAPI leg's are), so a target with
 * fewer requests is not done in the first seconds.
 */
function* interleave(opts: CampaignOptions): Generator<[FuzzTarget, FuzzRequest]> {
  const rounds = Math.max(0, ...opts.targets.map((t) => t.count));
  const streams = opts.targets.map((t, i) => generated(t, opts.seed + i * 1_000_003));
  for (let k = 0; k < rounds; k++)
    for (let i = 0; i < opts.targets.length; i++) {
      const t = opts.targets[i] as FuzzTarget;
      const due = Math.floor(((k + 1) * t.count) / rounds) - Math.floor((k * t.count) / rounds);
      for (let n = 0; n < due; n++) {
        const next = streams[i]?.next();
        if (next && !next.done) yield [t, next.value];
      }
    }
}

/** A target's requests, generated {@link CHUNK} at a time, each chunk from a seed of its own. */
function* generated(t: FuzzTarget, seed: number): Generator<FuzzRequest> {
  for (let c = 0; c * CHUNK < t.count; c++) {
    const n = Math.min(CHUNK, t.count - c * CHUNK);
    yield* fc.sample(t.arb, { seed: seed + c * 7919, numRuns: n });
  }
}
