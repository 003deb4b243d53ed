import { createParser } from 'eventsource-parser';
import { isFailureCode } from '@agent-reach/protocol';
import type { CallOutcome, CallRequest } from './endpoint-client.ts';
import { CallCode, clipText, failed, type CallFailure } from './failures.ts';

/** The SSE event names an HTTP endpoint's stream may use; any other event is a chunk. */
export const SseEvent = {
  progress: 'progress',
  result: 'result',
  error: 'error',
} as const;

/** An event's data: its JSON value when it parses, else the text itself. */
export function eventValue(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return data;
  }
}

/**
 * Reads an HTTP endpoint's `text/event-stream` reply to its end, or to its `result` or `error`
 * event: `progress` events go to `onProgress`, other events (named or not) to `onChunk`; the
 * result is the `result` event's value, else the last chunk's, else null. An `error` event fails
 * the call: its `message` (or the text), its `code` when it is a failure code (else
 * `HANDLER_ERROR`), retryable unless it says `"retryable": false`.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array> | null,
  req: Pick<CallRequest, 'onChunk' | 'onProgress'>,
): Promise<CallOutcome> {
  let ended: CallOutcome | undefined;
  let last: unknown = null;
  const parser = createParser({
    onEvent: (event) => {
      if (ended) return;
      const value = eventValue(event.data);
      if (event.event === SseEvent.progress) req.onProgress(value);
      else if (event.event === SseEvent.result) ended = { kind: 'completed', result: value };
      else if (event.event === SseEvent.error) ended = errorEventFailure(value);
      else {
        last = value;
        req.onChunk(value);
      }
    },
  });
  if (body) {
    const decoder = new TextDecoder();
    // Leaving the loop early (a result before the stream ends) cancels the body.
    for await (const bytes of body) {
      parser.feed(decoder.decode(bytes, { stream: true }));
      if (ended) break;
    }
    if (!ended) parser.feed(decoder.decode());
  }
  return ended ?? { kind: 'completed', result: last };
}

/** The failure an SSE `error` event stands for. */
function errorEventFailure(value: unknown): CallFailure {
  const fields =
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const text =
    typeof value === 'string'
      ? value
      : typeof fields.message === 'string'
        ? fields.message
        : JSON.stringify(value);
  const code = isFailureCode(fields.code) ? fields.code : CallCode.handlerError;
  return failed(code, clipText(text), fields.retryable !== false);
}
