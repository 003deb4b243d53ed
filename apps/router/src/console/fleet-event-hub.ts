import type { ServerResponse } from 'node:http';
import { disconnectNow, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { decodeFleetEvent, type FleetEvent, type ReachKeys } from '@agent-reach/protocol';
import { SseClient } from './sse-client.ts';

type Entry = [string, string[]];

/** Settings of the {@link FleetEventHub}. */
export interface FleetEventHubSettings {
  /** Longest XREAD BLOCK; also how soon the reader notices it has no client left. @default 5000 */
  blockMs?: number;
  /** Comment lines sent this often keep idle streams open through proxies. @default 15000 */
  heartbeatMs?: number;
  /** Bytes a client may leave unread before it is disconnected. @default 1048576 */
  maxBufferedBytes?: number;
  /** Most events replayed to a reconnecting client. @default 500 */
  maxReplay?: number;
}

/** A fleet event as the console receives it: the stream entry's id and the event. */
export type ConsoleFleetEvent = FleetEvent & { id: string };

const STREAM_ID = /^\d{1,20}-\d{1,20}$/;

/** What the fleet event hub needs. */
export interface FleetEventHubOptions {
  redis: RedisClient;
  connect: () => RedisClient;
  keys: ReachKeys;
  logger: Logger;
  /** @default {} */
  settings?: FleetEventHubSettings;
}

/**
 * Streams fleet events (`keys.fleetEvents()`) to every connected console over server-sent
 * events. One reader per router, on its own connection, runs only while a client is connected
 * and fans each entry out to all of them (architecture invariant 7: watchers add no load to
 * dispatch and a slow one cannot hold it up). A new client first gets recent events — the last
 * `backlog`, or everything after its `Last-Event-ID` when it reconnects — then live ones.
 */
export class FleetEventHub {
  private readonly clients = new Set<SseClient>();
  /** What each client may see (docs/SECURITY.md, Tenants): absent, everything. */
  private readonly filters = new Map<SseClient, (event: FleetEvent) => FleetEvent | undefined>();
  /** Clients still being sent their backlog, with where their live events wait meanwhile. */
  private readonly waiting = new Map<SseClient, (entry: Entry) => void>();
  private readonly log: Logger;
  private readonly blockMs: number;
  private readonly heartbeatMs: number;
  private readonly maxBufferedBytes: number;
  private readonly maxReplay: number;
  private conn: RedisClient | undefined;
  private loop: Promise<void> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly o: FleetEventHubOptions) {
    this.log = o.logger.child({ module: 'console-events' });
    const settings = o.settings ?? {};
    this.blockMs = settings.blockMs ?? 5000;
    this.heartbeatMs = settings.heartbeatMs ?? 15000;
    this.maxBufferedBytes = settings.maxBufferedBytes ?? 1024 * 1024;
    this.maxReplay = settings.maxReplay ?? 500;
  }

  /** Number of connected clients. */
  get size(): number {
    return this.clients.size;
  }

  /**
   * Takes over `res` as an event stream: recent events first, then live ones until the client
   * leaves or the hub closes. `show` passes each event on as the client may see it, or drops it
   * (undefined).
   */
  async attach(
    res: ServerResponse,
    opts: {
      backlog: number;
      lastEventId?: string | undefined;
      show?: (event: FleetEvent) => FleetEvent | undefined;
    },
  ): Promise<void> {
    const client = new SseClient({
      res,
      maxBufferedBytes: this.maxBufferedBytes,
      onGone: (c) => this.detach(c),
    });
    if (this.closed) {
      res.writeHead(503).end();
      return;
    }
    client.start(2000);
    // Live events that arrive while the backlog is read wait in the queue, so order holds.
    const queued: Entry[] = [];
    const pending = (entry: Entry) => queued.push(entry);
    this.clients.add(client);
    if (opts.show) this.filters.set(client, opts.show);
    this.waiting.set(client, pending);
    this.ensureReader();
    this.ensureHeartbeat();
    try {
      for (const entry of await this.recent(opts.backlog, opts.lastEventId))
        this.deliver(client, entry);
    } catch (err: unknown) {
      this.log.warn({ err }, 'could not read recent fleet events');
    }
    this.waiting.delete(client);
    for (const entry of queued) this.deliver(client, entry);
  }

  /** Ends every stream and stops the reader. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    for (const client of [...this.clients]) client.end();
    if (this.conn) disconnectNow(this.conn);
    await this.loop;
  }

  private detach(client: SseClient): void {
    this.clients.delete(client);
    this.filters.delete(client);
    this.waiting.delete(client);
    if (this.clients.size > 0) return;
    // Nobody watches: free the blocking connection now rather than after the BLOCK times out.
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.conn?.disconnect();
  }

  private deliver(client: SseClient, [id, fields]: Entry): void {
    const decoded = decodeFleetEvent(fields);
    const show = this.filters.get(client);
    const event = decoded && show ? show(decoded) : decoded;
    if (event) client.send(id, { id, ...event } satisfies ConsoleFleetEvent);
  }

  private broadcast(entry: Entry): void {
    for (const client of this.clients) {
      const wait = this.waiting.get(client);
      if (wait) wait(entry);
      else this.deliver(client, entry);
    }
  }

  private async recent(backlog: number, lastEventId: string | undefined): Promise<Entry[]> {
    const key = this.o.keys.fleetEvents();
    if (lastEventId !== undefined && STREAM_ID.test(lastEventId)) {
      return this.o.redis.xrange(key, `(${lastEventId}`, '+', 'COUNT', this.maxReplay);
    }
    if (backlog <= 0) return [];
    return ((await this.o.redis.xrevrange(key, '+', '-', 'COUNT', backlog)) as Entry[]).reverse();
  }

  private ensureHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      for (const client of this.clients) client.ping();
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private ensureReader(): void {
    if (this.loop || this.closed) return;
    const conn = this.o.connect();
    this.conn = conn;
    this.loop = this.read(conn).finally(() => {
      conn.disconnect();
      if (this.conn === conn) this.conn = undefined;
      this.loop = undefined;
      // A client that came while this reader was stopping needs a new one.
      if (this.clients.size > 0 && !this.closed) this.ensureReader();
    });
  }

  private async read(conn: RedisClient): Promise<void> {
    const key = this.o.keys.fleetEvents();
    let cursor: string | undefined;
    while (this.clients.size > 0 && !this.closed) {
      try {
        // Start after the newest entry there now; clients got older ones from their backlog.
        cursor ??= (await this.o.redis.xrevrange(key, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
        const reply = await conn.xread('COUNT', 200, 'BLOCK', this.blockMs, 'STREAMS', key, cursor);
        for (const entry of reply?.[0]?.[1] ?? []) {
          cursor = entry[0];
          this.broadcast(entry);
        }
      } catch (err: unknown) {
        if (this.clients.size === 0 || this.closed || conn.status === 'end') break;
        this.log.warn({ err }, 'fleet event read failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 500).unref());
      }
    }
  }
}
