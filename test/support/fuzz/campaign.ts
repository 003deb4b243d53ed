/**
 * A fuzz campaign: a given number of requests for every operation, generated with fast-check
 * from a seed and sent with bounded concurrency, the operations interleaved so that requests
 * to different endpoints race each other as real clients' would.
 */
import fc from 'fast-check';
import { Figures } from './figures.ts';
import { operationKey, type Operation } from './operations.ts';
import { requestArb, type FuzzRequest, type RequestOptions } from './requests.ts';
import { Sender } from './send.ts';

/** Options of {@link runCampaign}. */
export interface CampaignOptions {
  ops: Operation[];
  /** Requests per operation. */
  perEndpoint: number;
  /** Requests in flight at once (per run, over all services). */
  concurrency: number;
  /** fast-check seed: the same seed generates the same requests. */
  seed: number;
  /** How the requests of an operation are steered (known ids, valid credentials). */
  requestOptions: (op: Operation) => RequestOptions;
  /** Stops sending early (a service exited): the campaign ends with what it counted. */
  stopped?: () => boolean;
}

/** Requests are generated this many at a time per operation, to bound memory. */
const CHUNK = 100;

/** Runs the campaign and returns its figures. */
export async function runCampaign(opts: CampaignOptions): Promise<Figures> {
  const figures = new Figures();
  const senders = new Map<string, Sender>();
  const senderFor = (base: string) => {
    let s = senders.get(base);
    if (!s) senders.set(base, (s = new Sender(base, opts.concurrency)));
    return s;
  };
  const queue = interleave(opts);
  const worker = async () => {
    for (let next = queue.next(); !next.done; next = queue.next()) {
      if (opts.stopped?.()) return;
      const [op, req] = next.value;
      const out = await senderFor(op.baseUrl).send(req);
      figures.record(operationKey(op), req, out);
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
  } finally {
    for (const s of senders.values()) s.close();
  }
  figures.durationMs = performance.now() - figures.startedAt;
  return figures;
}

function* interleave(opts: CampaignOptions): Generator<[Operation, FuzzRequest]> {
  const arbs = opts.ops.map((op) => requestArb(op, opts.requestOptions(op)));
  const chunks = Math.ceil(opts.perEndpoint / CHUNK);
  for (let c = 0; c < chunks; c++) {
    const n = Math.min(CHUNK, opts.perEndpoint - c * CHUNK);
    const batches = arbs.map((arb, i) =>
      fc.sample(arb, { seed: opts.seed + i * 1_000_003 + c * 7919, numRuns: n }),
    );
    for (let k = 0; k < n; k++)
      for (let i = 0; i < opts.ops.length; i++) {
        const req = batches[i]?.[k];
        const op = opts.ops[i];
        if (req && op) yield [op, req];
      }
  }
}
