import type { ServerResponse } from 'node:http';

/** Compares two stream ids (`<ms>-<seq>`) in stream order. */
export function compareStreamIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  return Number(am) - Number(bm) || Number(as) - Number(bs);
}

/**
 * Headers of an event stream that proxies neither buffer nor cache. `connection: close`: the
 * socket ends with the stream, so a server shutting down is not held by a client keeping an
 * idle socket for reuse.
 */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'close',
  'x-accel-buffering': 'no',
} as const;

/** What an SSE client needs. */
export interface SseClientOptions {
  res: ServerResponse;
  maxBufferedBytes: number;
  onGone: (client: SseClient) => void;
}

/**
 * One server-sent-events response. Writes are dropped once the client is gone; a client that
 * reads too slowly (more than `maxBufferedBytes` waiting in the socket) is disconnected rather
 * than letting its backlog grow in the router's memory — its browser reconnects with
 * `Last-Event-ID` and resumes where it was.
 */
export class SseClient {
  private open = true;
  /** Id of the newest event written, so a live event already sent in the backlog is skipped. */
  lastId: string | undefined;

  constructor(private readonly o: SseClientOptions) {
    o.res.on('close', () => this.end());
  }

  /** True until the client left or was ended. */
  get isOpen(): boolean {
    return this.open;
  }

  /** Sends the status line, headers and the reconnection delay. */
  start(retryMs: number): void {
    this.o.res.writeHead(200, SSE_HEADERS);
    this.write(`retry: ${retryMs}\n\n`);
  }

  /** Sends one event unless its id is not newer than the last one sent. */
  send(id: string, data: unknown, event?: string): void {
    if (this.lastId !== undefined && compareStreamIds(id, this.lastId) <= 0) return;
    this.lastId = id;
    // JSON.stringify never emits a raw newline, so the data fits one `data:` line.
    this.write(`id: ${id}\n${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  }

  /** A comment line: keeps proxies and the browser from timing the stream out. */
  ping(): void {
    this.write(': ping\n\n');
  }

  /** Ends the response; idempotent. */
  end(): void {
    if (!this.open) return;
    this.open = false;
    if (!this.o.res.writableEnded) this.o.res.end();
    this.o.onGone(this);
  }

  private write(text: string): void {
    if (!this.open) return;
    if (this.o.res.writableLength > this.o.maxBufferedBytes) {
      this.end();
      return;
    }
    this.o.res.write(text);
  }
}
