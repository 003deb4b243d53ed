import { MAX_CHUNKS_PER_ACK, MAX_PROGRESS_BYTES } from '@agent-reach/protocol';
import type { Logger } from 'pino';
import type { AckTarget, AckWriter, OutputAck } from './acks.ts';

/** How long output waits to be sent with more: one `chunk` ack carries what came meanwhile. */
export const OUTPUT_LINGER_MS = 20;
/** Buffered bytes that send at once, without waiting for the linger. */
const FLUSH_BYTES = 64 * 1024;

type Item = { kind: 'chunk'; text: string } | { kind: 'progress'; json: string };

/** What a task's output needs from the runner. */
export interface TaskOutputContext {
  acks: AckWriter;
  target: AckTarget;
  /** Resolves once the task's receipt is on the acks stream: output never overtakes it. */
  receipt: () => Promise<void>;
  logger: () => Logger;
}

/**
 * A running task's progress values and output chunks (`TaskContext.progress()` / `.stream()`).
 * Calls only buffer; what came within {@link OUTPUT_LINGER_MS} leaves as few acks as it can
 * (consecutive chunks in one `chunk` ack, consecutive progress values as the last of them), in
 * the order given, and {@link close} sends the rest before the task's completion is written.
 */
export class TaskOutput {
  #items: Item[] = [];
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> = Promise.resolve();
  #closed = false;
  #used = false;

  constructor(private readonly ctx: TaskOutputContext) {}

  /** True once anything was given. */
  get used(): boolean {
    return this.#used;
  }

  /** Reports progress: any JSON-serialisable value up to 4 KiB as JSON (a number 0–1 or 0–100, an object). */
  progress(value: unknown): void {
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError('progress value is not JSON-serialisable');
    if (Buffer.byteLength(json) > MAX_PROGRESS_BYTES)
      throw new RangeError(`progress value is longer than ${MAX_PROGRESS_BYTES} bytes as JSON`);
    this.#add({ kind: 'progress', json }, json.length);
  }

  /** Appends a chunk of output text. */
  stream(chunk: string): void {
    if (typeof chunk !== 'string') throw new TypeError('a chunk is a string');
    this.#add({ kind: 'chunk', text: chunk }, chunk.length);
  }

  /** Sends what is buffered and waits for everything sent; later calls are ignored. */
  async close(): Promise<void> {
    if (this.#closed) return this.#sending;
    this.#flush();
    this.#closed = true;
    await this.#sending;
  }

  #add(item: Item, size: number): void {
    if (this.#closed) {
      this.ctx.logger().debug('output after the task ended; ignored');
      return;
    }
    this.#used = true;
    this.#items.push(item);
    this.#bytes += size;
    if (this.#bytes >= FLUSH_BYTES || this.#items.length >= MAX_CHUNKS_PER_ACK) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), OUTPUT_LINGER_MS);
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#items.length === 0) return;
    const acks = batchAcks(this.#items);
    this.#items = [];
    this.#bytes = 0;
    // In order: each batch leaves once the one before it (and the receipt) is written.
    this.#sending = this.#sending.then(async () => {
      await this.ctx.receipt();
      await this.ctx.acks.output(this.ctx.target, acks);
    });
  }
}

/** Items as acks: runs of chunks (at most MAX_CHUNKS_PER_ACK each), and each run of progress values as its last. */
export function batchAcks(items: readonly Item[]): OutputAck[] {
  const out: OutputAck[] = [];
  for (const item of items) {
    const last = out[out.length - 1];
    if (item.kind === 'progress') {
      if (last?.stage === 'progress') last.progress = item.json;
      else out.push({ stage: 'progress', progress: item.json });
    } else if (last?.stage === 'chunk' && last.chunks.length < MAX_CHUNKS_PER_ACK) {
      last.chunks.push(item.text);
    } else {
      out.push({ stage: 'chunk', chunks: [item.text] });
    }
  }
  return out;
}
