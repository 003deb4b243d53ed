/**
 * A loopback HTTP server the fuzz points services at: AgentCards for `card_url` at registration,
 * good and hostile (huge, deep, not JSON, empty, slow, trickling, redirecting, hanging up, lying
 * about their length, badly encoded), and a webhook that takes A2A push notifications.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { deepJson } from './hostile.ts';

/** The capability every card served here claims (never the flow's: its agents never read). */
export interface CardServerOptions {
  capability: string;
}

/** The running server. */
export interface CardServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The paths of the cards served (`/card/<name>`). */
  cardPaths: readonly string[];
  /** Push notifications received at `/hook`. */
  pushes(): number;
  close(): Promise<void>;
}

/** What each card path answers. */
function cards(capability: string): Record<string, (res: http.ServerResponse) => void> {
  const card = (extra: Record<string, unknown> = {}) => ({
    name: 'fuzz card',
    description: 'served by the fuzz',
    version: '1.0.0',
    skills: [{ id: capability, name: capability }],
    ...extra,
  });
  const json =
    (value: unknown, headers: http.OutgoingHttpHeaders = {}) =>
    (res: http.ServerResponse) => {
      res
        .writeHead(200, { 'content-type': 'application/json', ...headers })
        .end(typeof value === 'string' ? value : JSON.stringify(value));
    };
  return {
    valid: json(card()),
    'placement-hostile': json(
      card({
        capabilities: {
          extensions: [
            {
              uri: 'urn:agent-reach:placement:v1',
              params: { region: 'a{b}', tags: ['x'.repeat(5000), 7, null] },
            },
          ],
        },
      }),
    ),
    'skills-prototype': json(
      card({ skills: ['__proto__', 'constructor', 'valueOf'].map((id) => ({ id })) }),
    ),
    'skills-hostile': json(card({ skills: [{ id: 'a{b}' }, { id: '' }, { id: 5 }, null] })),
    'skills-many': json(
      card({ skills: Array.from({ length: 65 }, (_, i) => ({ id: `${capability}-${i}` })) }),
    ),
    'no-skills': json(card({ skills: [] })),
    'no-name': json({ skills: [{ id: capability }] }),
    array: json('[]'),
    null: json('null'),
    string: json('"card"'),
    bom: json(`\uFEFF${JSON.stringify(card())}`),
    'not-json': json('hello, I am no card'),
    empty: json(''),
    deep: json(deepJson(10_000, 'object')),
    huge: json(JSON.stringify(card({ description: 'x'.repeat(2 * 1024 * 1024) }))),
    'utf-16': (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-16le' })
        .end(Buffer.from(JSON.stringify(card()), 'utf16le')),
    'bad-gzip': (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
        .end('not gzip'),
    'lying-length': (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"name":');
      res.destroy();
    },
    'huge-length': (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-length': '99999999' })
        .end(),
    redirect: (res) =>
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end(),
    'not-found': (res) => res.writeHead(404).end(),
    'server-error': (res) => res.writeHead(500).end('{"error":"x"}'),
    'hang-up': (res) => res.socket?.destroy(),
    // Longer than the fetch may take (REACH_CARD_TIMEOUT_MS, 3 s by default).
    slow: (res) => {
      const timer = setTimeout(() => json(card())(res), 5000);
      res.on('close', () => clearTimeout(timer));
    },
    trickle: (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(timer));
    },
  };
}

/** Starts the server on a free loopback port. */
export async function startCardServer(opts: CardServerOptions): Promise<CardServer> {
  const answers = cards(opts.capability);
  let pushes = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.method === 'POST' && req.url?.startsWith('/hook')) {
      pushes += 1;
      res.writeHead(200).end();
      return;
    }
    const answer = answers[req.url?.replace(/^\/card\//, '') ?? ''];
    if (answer) answer(res);
    else res.writeHead(404).end();
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cardPaths: Object.keys(answers).map((name) => `/card/${name}`),
    pushes: () => pushes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
