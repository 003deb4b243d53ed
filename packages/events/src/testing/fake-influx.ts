import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A request the fake server saw, body decoded. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What to answer: a status (and headers), or `'hang'` to never answer. */
export type FakeReply =
  { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/**
 * A local HTTP server that plays InfluxDB's failure modes a real one won't produce on demand
 * (503s, rejections, hangs), for the sink's unit tests. Not a model of InfluxDB: the
 * integration tests use the real one.
 */
export interface FakeInflux {
  url: string;
  requests: SeenRequest[];
  /** Most requests that were open at the same time. */
  maxInFlight: number;
  /** Writes seen (`/write` and `/api/v2/write`). */
  writes(): SeenRequest[];
  close(): Promise<void>;
}

/** Default answers: `/ping` as 1.6.7, `/query` success, writes 204 after `delayMs`. */
export function defaultReply(req: SeenRequest, version = '1.6.7~rc0'): FakeReply {
  if (req.path === '/ping') return { status: 204, headers: { 'X-Influxdb-Version': version } };
  if (req.path === '/query') return { status: 200, body: '{"results":[{"statement_id":0}]}' };
  return { status: 204 };
}

/** Starts a fake on a free 127.0.0.1 port; `reply` decides each answer. */
export async function startFakeInflux(
  reply: (req: SeenRequest, seen: SeenRequest[]) => FakeReply = (req) => defaultReply(req),
  delayMs = 5,
): Promise<FakeInflux> {
  const requests: SeenRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let inFlight = 0;
  const state = { maxInFlight: 0 };
  const server = createServer((req, res) => {
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://fake');
      const seen: SeenRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'),
      };
      requests.push(seen);
      const answer = reply(seen, requests);
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => {
          inFlight--;
          hanging.delete(res);
        });
        return;
      }
      setTimeout(() => {
        inFlight--;
        res.writeHead(answer.status, answer.headers).end(answer.body);
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get maxInFlight() {
      return state.maxInFlight;
    },
    writes: () => requests.filter((r) => r.path === '/write' || r.path === '/api/v2/write'),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
