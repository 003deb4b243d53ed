import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, type DemoServer, type DemoServerOptions } from './listen.ts';
import { msField, pause, readBody } from './requests.ts';

type Fields = Record<string, unknown>;

/** True when the first media type the request accepts is `text/event-stream`. */
function wantsEvents(req: IncomingMessage): boolean {
  const first = (req.headers.accept ?? '').split(',')[0]!.split(';')[0]!.trim().toLowerCase();
  return first === 'text/event-stream';
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** One server-sent event. */
function sseEvent(data: unknown, event?: string): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${text}\n\n`;
}

/** A field of an object payload. */
function field(payload: unknown, name: string): unknown {
  return typeof payload === 'object' && payload !== null ? (payload as Fields)[name] : undefined;
}

/** The status a payload asks for (`status`, 300–599), or undefined. */
function askedStatus(payload: unknown): number | undefined {
  const status = field(payload, 'status');
  return typeof status === 'number' && Number.isInteger(status) && status >= 300 && status <= 599
    ? status
    : undefined;
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  options: DemoServerOptions,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/healthz') return sendJson(res, 200, { ok: true });
  if (req.method !== 'POST') return sendJson(res, 405, { error: 'POST a JSON body' });
  let payload: unknown;
  try {
    payload = JSON.parse(await readBody(req));
  } catch {
    return sendJson(res, 400, { error: 'the body is not JSON, or is over 1 MiB' });
  }
  const key = req.headers['idempotency-key'];
  const idempotencyKey = typeof key === 'string' ? key : null;
  const gone = new AbortController();
  res.once('close', () => {
    if (res.writableFinished) return;
    gone.abort();
    options.onCancel?.(idempotencyKey ?? '');
  });
  const delayMs = msField(payload, 'delay_ms');
  const reply = { echo: payload, idempotency_key: idempotencyKey };

  if (!wantsEvents(req)) {
    if (!(await pause(delayMs, gone.signal))) return;
    const status = askedStatus(payload);
    if (status === undefined) return sendJson(res, 200, reply);
    const retryAfter = field(payload, 'retry_after');
    return sendJson(
      res,
      status,
      { error: `asked for ${status}` },
      {
        ...(typeof retryAfter === 'string' || typeof retryAfter === 'number'
          ? { 'retry-after': String(retryAfter) }
          : {}),
        ...(status < 400 ? { location: '/moved' } : {}),
      },
    );
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(sseEvent({ progress: 0.5 }, 'progress'));
  if (!(await pause(delayMs / 2, gone.signal))) return;
  res.write(sseEvent({ part: 1 }));
  res.write(sseEvent('part 2'));
  if (!(await pause(delayMs / 2, gone.signal))) return;
  res.end(sseEvent(reply, 'result'));
}

/**
 * Starts a plain HTTP JSON endpoint that knows nothing of Agent-Reach.
 *
 * - `POST <any path>` with a JSON body answers `{ "echo": <body>, "idempotency_key": <the
 *   Idempotency-Key header, or null> }`. When the first type the request accepts is
 *   `text/event-stream`, it streams instead: a `progress` event `{"progress":0.5}`, two
 *   unnamed events (`{"part":1}`, then the text `part 2`) and a `result` event with that reply.
 * - Payload fields it heeds: `delay_ms` (wait before answering; split around the chunks when
 *   streaming), `status` (300–599: answer that status, a 3xx with `Location: /moved`) and
 *   `retry_after` (sent as `Retry-After`).
 * - `GET /healthz` answers 200.
 *
 * A call whose client goes away before the answer ends is reported to `onCancel` with its
 * idempotency key.
 */
export async function startHttpServer(options: DemoServerOptions = {}): Promise<DemoServer> {
  const server = createServer((req, res) => {
    answer(req, res, options).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: 'demo server failure' });
      else res.destroy();
    });
  });
  return listen(server, options);
}
