import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A canned reply, or a function of the request that returns one. */
export type StubReply =
  | { status: number; body: unknown }
  | ((req: { url: URL; body: string }) => { status: number; body: unknown });

/** A request the stub received. */
export interface StubRequest {
  method: string;
  url: URL;
  body: string;
  /** The Authorization header, if any. */
  authorization: string | undefined;
}

/** A tiny HTTP server answering documented replies, to check how `reach` renders them. */
export interface StubServer {
  url: string;
  requests: StubRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Starts a server on 127.0.0.1 that answers `routes["METHOD /path"]` (path without the query)
 * and 404 `{error: 'NOT_FOUND'}` for anything else.
 */
export async function startStub(routes: Record<string, StubReply>): Promise<StubServer> {
  const requests: StubRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stub');
      const body = await readBody(req);
      requests.push({
        method: req.method ?? 'GET',
        url,
        body,
        authorization: req.headers.authorization,
      });
      const route = routes[`${req.method ?? 'GET'} ${url.pathname}`];
      const reply =
        typeof route === 'function'
          ? route({ url, body })
          : (route ?? { status: 404, body: { error: 'NOT_FOUND', message: 'no route' } });
      if (reply.status === 204) {
        res.writeHead(204).end();
        return;
      }
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
