/**
 * HTTP framing abuse for the fuzz's raw requests: how a request line, header block and body are
 * broken when written straight to a socket (bogus lengths, smuggling shapes, bad chunking, bare
 * LF, oversized header blocks, odd methods and versions).
 */
import fc from 'fast-check';

/**
 * Framing abuse written as raw bytes: how each request line, header block and body is broken.
 * A malformed request may be answered by a hang-up: node's HTTP parser replies 400 when it can,
 * but closes without a reply when the route's answer had already begun (a GET is answered
 * before its body is read). Only `wellFormed` ones must get a status.
 */
export type Framing = {
  name: string;
  wellFormed?: boolean;
  make: (line: string, body: Buffer) => Buffer;
};

/** The line break of HTTP/1.1. */
export const CRLF = '\r\n';
const bytes = (...parts: (string | Buffer)[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : p)));
const head = (line: string, headers: string[]) =>
  line + CRLF + ['host: 127.0.0.1', 'connection: close', ...headers].join(CRLF) + CRLF + CRLF;
const json = 'content-type: application/json';

const FRAMINGS: Framing[] = [
  { name: 'cl-not-a-number', make: (l, b) => bytes(head(l, [json, 'content-length: abc']), b) },
  { name: 'cl-negative', make: (l, b) => bytes(head(l, [json, 'content-length: -1']), b) },
  {
    name: 'cl-twice-differing',
    make: (l, b) =>
      bytes(head(l, [json, `content-length: ${b.length}`, `content-length: ${b.length + 1}`]), b),
  },
  {
    name: 'cl-and-chunked',
    make: (l, b) =>
      bytes(
        head(l, [json, `content-length: ${b.length}`, 'transfer-encoding: chunked']),
        `${b.length.toString(16)}${CRLF}`,
        b,
        `${CRLF}0${CRLF}${CRLF}`,
      ),
  },
  {
    name: 'chunk-size-garbage',
    make: (l, b) =>
      bytes(
        head(l, [json, 'transfer-encoding: chunked']),
        `zz${CRLF}`,
        b,
        `${CRLF}0${CRLF}${CRLF}`,
      ),
  },
  {
    name: 'te-unknown',
    make: (l, b) =>
      bytes(
        head(l, [json, 'transfer-encoding: gzip, chunked']),
        `${b.length.toString(16)}${CRLF}`,
        b,
        `${CRLF}0${CRLF}${CRLF}`,
      ),
  },
  {
    name: 'cl-short-then-smuggled',
    wellFormed: true,
    make: (l, b) =>
      bytes(
        head(l, [json, 'content-length: 1']),
        b,
        `GET /admin HTTP/1.1${CRLF}host: x${CRLF}${CRLF}`,
      ),
  },
  {
    name: 'cl-longer-than-body',
    make: (l, b) => bytes(head(l, [json, `content-length: ${b.length + 100}`]), b),
  },
  {
    name: 'cl-huge',
    make: (l, b) => bytes(head(l, [json, 'content-length: 999999999999999']), b),
  },
  {
    name: 'bare-lf',
    make: (l, b) =>
      bytes(
        `${l}\nhost: 127.0.0.1\nconnection: close\n${json}\ncontent-length: ${b.length}\n\n`,
        b,
      ),
  },
  {
    name: 'header-without-colon',
    make: (l, b) => bytes(head(l, [json, 'no colon here', `content-length: ${b.length}`]), b),
  },
  {
    name: 'space-before-colon',
    make: (l, b) =>
      bytes(head(l, ['content-type : application/json', `content-length: ${b.length}`]), b),
  },
  {
    name: 'obs-fold',
    make: (l, b) => bytes(head(l, [json, 'x-folded: a', ' b', `content-length: ${b.length}`]), b),
  },
  {
    name: 'nul-in-header',
    make: (l, b) => bytes(head(l, [json, 'x-nul: a\u0000b', `content-length: ${b.length}`]), b),
  },
  {
    name: 'high-bytes-in-header',
    make: (l, b) =>
      bytes(
        head(l, [json, 'authorization: Bearer \u00ff\u00fe\u007f', `content-length: ${b.length}`]),
        b,
      ),
  },
  {
    name: 'header-block-20kb',
    make: (l, b) =>
      bytes(head(l, [json, 'x-big: ' + 'a'.repeat(20 * 1024), `content-length: ${b.length}`]), b),
  },
  {
    name: 'headers-3000',
    make: (l, b) =>
      bytes(
        head(l, [
          json,
          ...Array.from({ length: 3000 }, (_, i) => `x-${i}: ${i}`),
          `content-length: ${b.length}`,
        ]),
        b,
      ),
  },
  {
    name: 'no-host',
    make: (l, b) =>
      bytes(
        `${l}${CRLF}connection: close${CRLF}${json}${CRLF}content-length: ${b.length}${CRLF}${CRLF}`,
        b,
      ),
  },
  {
    name: 'http-1.0',
    wellFormed: true,
    make: (l, b) =>
      bytes(head(l.replace(/HTTP\/1\.1$/, 'HTTP/1.0'), [json, `content-length: ${b.length}`]), b),
  },
  {
    name: 'http-9.9',
    make: (l, b) =>
      bytes(head(l.replace(/HTTP\/1\.1$/, 'HTTP/9.9'), [json, `content-length: ${b.length}`]), b),
  },
  {
    name: 'lowercase-method',
    make: (l, b) =>
      bytes(
        head(
          l.replace(/^\w+/, (m) => m.toLowerCase()),
          [json, `content-length: ${b.length}`],
        ),
        b,
      ),
  },
  {
    name: 'unknown-method',
    make: (l, b) =>
      bytes(head(l.replace(/^\w+/, 'FUZZ'), [json, `content-length: ${b.length}`]), b),
  },
  {
    name: 'absolute-form',
    wellFormed: true,
    make: (l, b) =>
      bytes(head(l.replace(' /', ' http://127.0.0.1/'), [json, `content-length: ${b.length}`]), b),
  },
  {
    name: 'raw-unicode-path',
    make: (l, b) =>
      bytes(head(l.replace(' /', ' /\u00e9\u00ff/'), [json, `content-length: ${b.length}`]), b),
  },
  {
    name: 'space-in-path',
    make: (l, b) =>
      bytes(head(l.replace(' /', ' /a b/'), [json, `content-length: ${b.length}`]), b),
  },
  {
    name: 'upgrade-websocket',
    wellFormed: true,
    make: (l, b) =>
      bytes(
        head(l, [
          json,
          'upgrade: websocket',
          'connection: upgrade',
          'sec-websocket-key: x',
          `content-length: ${b.length}`,
        ]),
        b,
      ),
  },
  {
    name: 'pipelined',
    wellFormed: true,
    make: (l, b) =>
      bytes(
        head(l, [json, `content-length: ${b.length}`]).replace(
          'connection: close',
          'connection: keep-alive',
        ),
        b,
        head(l, [json, `content-length: ${b.length}`]),
        b,
      ),
  },
];

export const rawFraming: fc.Arbitrary<Framing> = fc.constantFrom(...FRAMINGS);
