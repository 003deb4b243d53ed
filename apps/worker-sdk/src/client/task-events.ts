import { ROUTES } from '@agent-reach/protocol';
import { ReachHttpError } from '../errors.ts';
import { Backoff, type CompiledBackoff } from '../util/backoff.ts';
import { joinUrl } from '../util/http.ts';
import { sleep } from '../util/sleep.ts';

/**
 * One event of `GET /v1/tasks/:task_id/events`: a `stage` of the task's timeline, a `progress`
 * value, a `chunk` of output, or `truncated` (the output reached its bound). `id` resumes the
 * stream after it.
 */
export type TaskEventMessage =
  | { event: 'stage'; id: string; data: { stage: string; at: number; [k: string]: unknown } }
  | { event: 'progress'; id: string; data: { at: number; attempt: number; progress: unknown } }
  | { event: 'chunk'; id: string; data: { at: number; attempt: number; chunk: string } }
  | {
      event: 'truncated';
      id: string;
      data: { at: number; attempt: number; chunks: number; bytes: number };
    };

/** Options of `ReachClient.events()`. */
export interface TaskEventsOptions {
  /** Start after this event (the `id` of the last one seen) instead of at the beginning. */
  lastEventId?: string;
  /** Stops following (the iteration then ends). */
  signal?: AbortSignal;
}

/** Stages after which a task's event stream ends. */
const FINAL_STAGES = new Set(['completed', 'dead', 'cancelled']);

/** What following needs from the client. */
export interface TaskEventsContext {
  routerUrl: string;
  apiKey: string | undefined;
  retry: CompiledBackoff;
}

/** Splits an event stream's text into events (`id`, `event`, `data` lines; comments skipped). */
export function parseSseBlock(block: string): { id?: string; event?: string; data?: string } {
  const out: { id?: string; event?: string; data?: string } = {};
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') out.id = value;
    else if (field === 'event') out.event = value;
    else if (field === 'data') out.data = out.data === undefined ? value : `${out.data}\n${value}`;
  }
  return out;
}

/**
 * Follows a task's events until its final stage: a stream that breaks off before it (a lost
 * connection, a router restart) is opened again with `Last-Event-ID`, with backoff, so no event
 * is lost or repeated. An error reply (404 for a task unknown to this key) rejects with a
 * {@link ReachHttpError}.
 */
export async function* followTaskEvents(
  ctx: TaskEventsContext,
  taskId: string,
  options: TaskEventsOptions = {},
): AsyncGenerator<TaskEventMessage, void, undefined> {
  let lastId = options.lastEventId;
  const backoff = new Backoff(ctx.retry);
  const url = joinUrl(ctx.routerUrl, ROUTES.taskEvents(taskId));
  // A function: the compiler would take the signal's state for fixed between awaits.
  const stopped = (): boolean => options.signal?.aborted === true;
  for (;;) {
    if (stopped()) return;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (ctx.apiKey !== undefined) headers['authorization'] = `Bearer ${ctx.apiKey}`;
    if (lastId !== undefined) headers['last-event-id'] = lastId;
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: options.signal ?? null });
    } catch (err: unknown) {
      if (stopped()) return;
      if (!(err instanceof Error)) throw err;
      await sleep(backoff.next(), options.signal);
      continue;
    }
    if (res.status !== 200 || res.body === null) {
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: reported as text.
      }
      if (res.status >= 500) {
        await sleep(backoff.next(), options.signal);
        continue;
      }
      throw new ReachHttpError(`GET ${url}`, res.status, body);
    }
    let ended = false;
    try {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(bytes, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const block = parseSseBlock(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (block.event === undefined || block.data === undefined || block.id === undefined)
            continue;
          lastId = block.id;
          backoff.reset();
          const msg = {
            event: block.event,
            id: block.id,
            data: JSON.parse(block.data) as Record<string, unknown>,
          } as TaskEventMessage;
          yield msg;
          if (msg.event === 'stage' && FINAL_STAGES.has(msg.data.stage)) ended = true;
        }
      }
    } catch (err: unknown) {
      if (stopped()) return;
      if (!(err instanceof Error)) throw err;
      // The stream broke off: opened again after the last event seen.
    }
    if (ended) return;
    await sleep(backoff.next(), options.signal).catch(() => undefined);
  }
}
