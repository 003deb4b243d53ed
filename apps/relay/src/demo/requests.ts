import type { IncomingMessage } from 'node:http';

/** Largest request body a demo server reads. */
const MAX_BODY_BYTES = 1 << 20;

/** A request's body as text (at most 1 MiB). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size > MAX_BODY_BYTES) throw new Error('request body over 1 MiB');
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Resolves after `ms`, or at once when `signal` aborts; true when it waited the whole time. */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0 || signal.aborted) return Promise.resolve(!signal.aborted);
  return new Promise((resolve) => {
    const done = (full: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(full);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A payload field as a non-negative number of milliseconds; 0 when absent or not one. */
export function msField(payload: unknown, field: string): number {
  const value =
    typeof payload === 'object' && payload !== null
      ? (payload as Record<string, unknown>)[field]
      : undefined;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
