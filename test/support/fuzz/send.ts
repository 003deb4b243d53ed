/**
 * Sends fuzz requests to 127.0.0.1 and reports what came back: keep-alive HTTP through node's
 * client for most requests, a fresh socket for the raw ones (bytes node's client refuses to
 * write). Event streams are read up to their head (or their first event, when the request asks),
 * then hung up.
 */
import http from 'node:http';
import net from 'node:net';
import { readEvent, readReply, type ReplyReading } from './replies.ts';
import type { FuzzRequest } from './requests.ts';

/** What one request got. */
export interface Outcome extends ReplyReading {
  /** The HTTP status; for pipelined raw requests the highest of the replies. */
  status?: number;
  /** The server hung up without a reply, or no reply came in time, or the client failed. */
  fault?: 'closed' | 'timeout' | 'client';
  detail?: string;
  ms: number;
}

/** Anything that sends fuzz requests somewhere: HTTP to a service, or a process's stdin. */
export interface RequestSender {
  /** Sends one request and waits for its outcome (never rejects). */
  send(req: FuzzRequest): Promise<Outcome>;
  close(): void;
}

/**
 * How long a request may take before it counts as a hang: longer than the longest wait the API
 * promises (an A2A blocking send holds its reply up to 60 s, MAX_SUBMIT_WAIT_MS; a task that finds
 * no free slot now waits in its waiting room instead of a fast 429 or 503).
 */
export const REQUEST_TIMEOUT_MS = 70_000;
const KEEP_BYTES = 4096;
/** Kept of a JSON-RPC reply, to read its answer whole (an echoed payload can be large). */
const KEEP_RPC_BYTES = 256 * 1024;
/** How long an event stream asked for its first event is read before it counts as silent. */
const FIRST_EVENT_MS = 1500;
/** Requests each kept-alive socket carried. */
const served = new WeakMap<net.Socket, number>();

/** A keep-alive sender to one service. */
export class Sender implements RequestSender {
  private readonly agent: http.Agent;

  constructor(
    private readonly baseUrl: string,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  /** Sends one request and waits for its outcome (never rejects). */
  async send(req: FuzzRequest): Promise<Outcome> {
    if (req.raw) return this.sendRaw(req);
    const out = await this.sendHttp(req, this.agent);
    // A kept-alive socket the server closed after an earlier request (its HTTP parser hangs up
    // after a 431 without saying `Connection: close`): node's documented remedy is to send again
    // on a new connection. A hang-up on a fresh connection is the request's own outcome.
    return out.reused && out.fault === 'closed' ? this.sendHttp(req, false) : out;
  }

  close(): void {
    this.agent.destroy();
  }

  private sendHttp(
    req: FuzzRequest,
    agent: http.Agent | false,
  ): Promise<Outcome & { reused?: boolean }> {
    const url = new URL(this.baseUrl);
    const started = performance.now();
    return new Promise((resolve) => {
      let done = false;
      let r: http.ClientRequest | undefined;
      let reused = false;
      const timer = setTimeout(() => {
        finish({ fault: 'timeout' });
        r?.destroy();
      }, REQUEST_TIMEOUT_MS);
      const finish = (o: Omit<Outcome, 'ms'>) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve({
          ...o,
          ms: performance.now() - started,
          ...(reused ? { reused: true } : {}),
        });
      };
      try {
        r = http.request({
          agent,
          host: url.hostname,
          port: url.port,
          method: req.method,
          path: req.target,
          // Framed by its length whatever the method (node sends a GET's body unframed).
          headers: req.body
            ? { 'content-length': String(req.body.length), ...req.headers }
            : req.headers,
        });
      } catch (err) {
        finish({ fault: 'client', detail: (err as Error).message });
        return;
      }
      const sent = r;
      // Node flags `reusedSocket` only for sockets taken from the free pool, not for one handed
      // straight to a queued request: count each socket's requests instead.
      sent.on('socket', (socket) => {
        const before = served.get(socket) ?? 0;
        reused = before > 0;
        served.set(socket, before + 1);
      });
      r.on('error', (err: NodeJS.ErrnoException) => {
        const hungUp = ['ECONNRESET', 'EPIPE', 'ERR_STREAM_DESTROYED'].includes(err.code ?? '');
        finish({ fault: hungUp ? 'closed' : 'client', detail: err.code ?? err.message });
      });
      r.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          // A live stream: its head (or first event) is the answer; then hang up as a browser
          // tab closing would.
          if (!req.jsonrpc && !req.firstEvent) {
            finish({ status });
            sent.destroy();
            return;
          }
          firstEvent(res, Boolean(req.jsonrpc)).then(
            (reading) => {
              finish({ status, ...reading });
              sent.destroy();
            },
            () => finish({ status, fault: 'closed' }),
          );
          return;
        }
        const chunks: Buffer[] = [];
        const keep = req.jsonrpc ? KEEP_RPC_BYTES : KEEP_BYTES;
        let kept = 0;
        res.on('data', (c: Buffer) => {
          if (kept < keep) chunks.push(c);
          kept += c.length;
        });
        res.on('end', () =>
          finish({ status, ...readReply(Buffer.concat(chunks), Boolean(req.jsonrpc)) }),
        );
        res.on('error', () => finish({ status }));
      });
      r.end(req.body);
    });
  }

  private sendRaw(req: FuzzRequest): Promise<Outcome> {
    const url = new URL(this.baseUrl);
    const started = performance.now();
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let done = false;
      const socket = net.connect({ host: url.hostname, port: Number(url.port) });
      const finish = (fault?: Outcome['fault'], detail?: string) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket.destroy();
        const text = Buffer.concat(chunks).toString('latin1');
        // Each reply (pipelined requests get several): its status, and its body's error code.
        const starts = [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)];
        const ms = performance.now() - started;
        const replies = starts.map((m, i) => {
          const end = starts[i + 1]?.index ?? text.length;
          const head = text.slice(m.index, end);
          const body = Buffer.from(head.slice(head.indexOf('\r\n\r\n') + 4), 'latin1');
          return { status: Number(m[1]), ...readReply(body, false) };
        });
        const worst = replies.sort((a, b) => b.status - a.status)[0];
        if (!worst) {
          resolve({ fault: fault ?? 'closed', ms, ...(detail ? { detail } : {}) });
          return;
        }
        resolve({ ...worst, ms });
      };
      const timer = setTimeout(() => finish('timeout'), REQUEST_TIMEOUT_MS);
      socket.on('data', (c: Buffer) => {
        if (chunks.reduce((n, x) => n + x.length, 0) < 64 * KEEP_BYTES) chunks.push(c);
        // An event stream stays open: its head is the answer.
        const text = Buffer.concat(chunks).toString('latin1');
        if (/\r\ncontent-type: text\/event-stream/i.test(text) && text.includes('\r\n\r\n'))
          finish();
      });
      socket.on('close', () => finish());
      socket.on('error', (err: NodeJS.ErrnoException) => finish(undefined, err.code));
      socket.write(req.raw!, () => {
        // A request whose body never finishes: tell the server no more bytes are coming.
        if (req.mayClose) socket.end();
      });
    });
  }
}

/**
 * Reads an event stream up to its first event that carries data (comments and `retry:` lines
 * skipped), for at most {@link FIRST_EVENT_MS}: what it says, `sse:none` when nothing came.
 */
function firstEvent(res: http.IncomingMessage, jsonrpc: boolean): Promise<ReplyReading> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (reading: ReplyReading) => {
      clearTimeout(timer);
      res.removeAllListeners('data');
      resolve(reading);
    };
    const silent = { rpc: jsonrpc ? 'none' : 'sse:none' };
    const timer = setTimeout(() => done(silent), FIRST_EVENT_MS);
    res.on('data', (c: Buffer) => {
      text += c.toString('utf8').replace(/\r\n?/g, '\n');
      for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        if (/^data:/m.test(block)) return done(readEvent(block, jsonrpc));
      }
    });
    res.on('end', () => done(silent));
    res.on('error', reject);
  });
}
