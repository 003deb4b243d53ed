import { randomBytes } from 'node:crypto';
import { disconnectNow, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  decodeCallback,
  isFinalCallback,
  type FinalCallbackMessage,
  type ReachKeys,
} from '@agent-reach/protocol';
import { WAIT_TOPIC_PREFIX } from './wait-topic.ts';

/** A submission waiting for its result: `result` resolves with it, or undefined when the wait ran out. */
export interface Expectation {
  result: Promise<FinalCallbackMessage | undefined>;
  /** Stops waiting (resolves `result` with undefined if still pending). */
  cancel(): void;
}

interface Waiting {
  resolve(msg: FinalCallbackMessage | undefined): void;
  timer: NodeJS.Timeout;
}

/** What a result waiter needs. */
export interface ResultWaiterOptions {
  conn: RedisClient;
  keys: ReachKeys;
  logger: Logger;
  /** @default 5000 */
  blockMs?: number;
}

/**
 * Answers `POST /v1/tasks?wait_ms=`: tasks submitted with a wait get this router's own callback
 * topic, and one blocking read loop on that topic hands each result to the request waiting for
 * it. A request registers before its task is submitted, so no result can arrive unseen. A result
 * nobody waits for any more (the wait ran out, or the router restarted) stays readable with
 * `GET /v1/tasks/:task_id` for the task retention.
 */
export class ResultWaiter {
  private readonly blockMs: number;
  /** The topic this router's waiting submissions are published to. */
  readonly topic = `${WAIT_TOPIC_PREFIX}${randomBytes(8).toString('hex')}`;
  readonly #waiting = new Map<string, Waiting>();
  #cursor = '0';
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(private readonly o: ResultWaiterOptions) {
    this.blockMs = o.blockMs ?? 5000;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** Starts the read loop (once). */
  start(): void {
    if (this.#loop) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Waits up to `waitMs` for the result of `taskId`; call before submitting it. */
  expect(taskId: string, waitMs: number): Expectation {
    this.#waiting.get(taskId)?.resolve(undefined);
    let resolve!: (msg: FinalCallbackMessage | undefined) => void;
    const result = new Promise<FinalCallbackMessage | undefined>((r) => (resolve = r));
    const settle = (msg: FinalCallbackMessage | undefined) => {
      const w = this.#waiting.get(taskId);
      if (w?.resolve !== settle) return;
      clearTimeout(w.timer);
      this.#waiting.delete(taskId);
      resolve(msg);
    };
    this.#waiting.set(taskId, {
      resolve: settle,
      timer: setTimeout(() => settle(undefined), waitMs),
    });
    return { result, cancel: () => settle(undefined) };
  }

  /** Ends the loop and every wait (their requests answer with the task still running). */
  async close(): Promise<void> {
    this.#running = false;
    disconnectNow(this.o.conn);
    await this.#loop;
    for (const w of [...this.#waiting.values()]) w.resolve(undefined);
  }

  async #run(): Promise<void> {
    const key = this.o.keys.callback(this.topic);
    while (this.#running) {
      try {
        const reply = await this.o.conn.xread(
          'COUNT',
          1000,
          'BLOCK',
          this.blockMs,
          'STREAMS',
          key,
          this.#cursor,
        );
        for (const [id, fields] of reply?.[0]?.[1] ?? []) {
          this.#cursor = id;
          const msg = decodeCallback(fields);
          // Only a final item ends a wait (a streamed task's progress and chunks are not).
          if (isFinalCallback(msg)) this.#waiting.get(msg.task_id)?.resolve(msg);
        }
      } catch (err: unknown) {
        if (!this.#running) return;
        this.o.logger.warn({ err, topic: this.topic }, 'result wait read failed; retrying');
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
}
