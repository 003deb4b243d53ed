import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ReachKeys } from '@agent-reach/protocol';
import type { BlockingPool } from '../callbacks/blocking-pool.ts';
import { SSE_HEADERS } from '../console/sse-client.ts';
import type { TaskEventsPage, TaskEventsReader } from './task-events.ts';

/** Settings of the {@link TaskEventsFeed}. */
export interface TaskEventsFeedSettings {
  /**
   * Longest blocking read of a follower's live tail: how late a stage can show when no output
   * wakes the read sooner. @default 1000
   */
  blockMs?: number;
  /** Comment lines sent this often keep idle streams open through proxies. @default 15000 */
  heartbeatMs?: number;
  /** Bytes a follower may leave unread before it is disconnected (it resumes with Last-Event-ID). @default 1048576 */
  maxBufferedBytes?: number;
  /** The reconnection delay told to clients (`retry:`). @default 1000 */
  retryMs?: number;
}

/** What the task events feed needs. */
export interface TaskEventsFeedOptions {
  reader: TaskEventsReader;
  pool: BlockingPool;
  keys: ReachKeys;
  logger: Logger;
  /** @default {} */
  settings?: TaskEventsFeedSettings;
}

/**
 * Streams one task's events to one follower as server-sent events: everything after its cursor
 * (all of it for a new follower), then live until the task is final, then the stream ends. The
 * live tail is a blocking XREAD on the task's events stream, woken by new output, at most
 * `blockMs` long, on a connection of the bounded `pool` (REACH_EVENTS_CONNECTIONS): followers
 * beyond the bound wait their turn, never open connections of their own.
 */
export class TaskEventsFeed {
  readonly #blockMs: number;
  readonly #heartbeatMs: number;
  readonly #maxBufferedBytes: number;
  readonly #retryMs: number;
  #closed = false;
  readonly #open = new Set<ServerResponse>();

  constructor(private readonly o: TaskEventsFeedOptions) {
    const settings = o.settings ?? {};
    this.#blockMs = settings.blockMs ?? 1000;
    this.#heartbeatMs = settings.heartbeatMs ?? 15_000;
    this.#maxBufferedBytes = settings.maxBufferedBytes ?? 1024 * 1024;
    this.#retryMs = settings.retryMs ?? 1000;
  }

  /** Followers connected now. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Takes over `res` (headers not sent yet) and streams the task's events: `first` (the route's
   * read, which found the task), then what follows. Resolves when the stream ended.
   */
  async follow(
    res: ServerResponse,
    taskId: string,
    first: TaskEventsPage,
    show: (id: string) => string,
  ): Promise<void> {
    let open = true;
    const stop = () => {
      open = false;
    };
    res.on('close', stop);
    this.#open.add(res);
    res.writeHead(200, SSE_HEADERS);
    const write = (text: string): void => {
      if (!open) return;
      // A follower that reads too slowly is let go: it resumes where it was with Last-Event-ID.
      if (res.writableLength > this.#maxBufferedBytes) {
        open = false;
        return;
      }
      res.write(text);
    };
    write(`retry: ${this.#retryMs}\n\n`);
    const heartbeat = setInterval(() => write(': ping\n\n'), this.#heartbeatMs);
    heartbeat.unref();
    let at = first.cursor;
    let page: TaskEventsPage | undefined = first;
    try {
      while (open && !this.#closed) {
        page ??= await this.o.reader.read(taskId, at, show);
        if (page === undefined) break;
        for (const e of page.events)
          write(`id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
        at = page.cursor;
        if (page.done) break;
        const more = page.more;
        page = undefined;
        if (more) continue;
        await this.waitForOutput(taskId, at.entryId);
      }
    } catch (err: unknown) {
      if (!this.#closed) this.o.logger.warn({ err, task_id: taskId }, 'task events feed failed');
    } finally {
      clearInterval(heartbeat);
      res.off('close', stop);
      this.#open.delete(res);
      if (!res.writableEnded) res.end();
    }
  }

  /** True once {@link close} was called: followers stop. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * A follower's live tail: waits until the task's events stream holds an entry after
   * `afterEntryId`, or `blockMs` passed (a stage may have come meanwhile: read again either way),
   * on a connection of the bounded pool.
   */
  async waitForOutput(taskId: string, afterEntryId: string): Promise<void> {
    const key = this.o.keys.taskEvents(taskId);
    await this.o.pool.use((conn) =>
      conn.xread('COUNT', 1, 'BLOCK', this.#blockMs, 'STREAMS', key, afterEntryId),
    );
  }

  /** Ends every stream (the pool's close interrupts blocked reads). Idempotent. */
  close(): void {
    this.#closed = true;
    for (const res of this.#open) if (!res.writableEnded) res.end();
  }
}
