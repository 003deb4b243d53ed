import type { CallOutcome } from './endpoint-client.ts';
import { CallCode, clipText, failed } from './failures.ts';
import { isJsonObject } from './json.ts';

/** A tool's arguments for a payload: an object as is, anything else as `{ input: payload }`. */
export function toolArguments(payload: unknown): Record<string, unknown> {
  return isJsonObject(payload) ? payload : { input: payload };
}

/** What `tools/call` answers, as far as the mapping reads it. */
export interface ToolReply {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** The 2024-10-07 form of a result. */
  toolResult?: unknown;
}

/** The `text` of a text content item, else undefined. */
function textOf(item: unknown): string | undefined {
  if (!isJsonObject(item) || item.type !== 'text') return undefined;
  return typeof item.text === 'string' ? item.text : undefined;
}

/**
 * The outcome of a tool's reply: `isError` fails `HANDLER_ERROR`, not retryable, with its text;
 * else the result is the `structuredContent` when present, else a single text content's JSON
 * value when it parses (`{ "text": … }` when not), else `{ "content": [...] }`.
 */
export function toolOutcome(reply: ToolReply): CallOutcome {
  if (reply.toolResult !== undefined && reply.content === undefined)
    return { kind: 'completed', result: reply.toolResult };
  const content = reply.content ?? [];
  if (reply.isError) {
    const text = content
      .map(textOf)
      .filter((t) => t !== undefined)
      .join('\n');
    return failed(CallCode.handlerError, clipText(text) || 'the tool reported an error', false);
  }
  if (reply.structuredContent !== undefined)
    return { kind: 'completed', result: reply.structuredContent };
  const only = content.length === 1 ? textOf(content[0]) : undefined;
  if (only !== undefined) {
    try {
      return { kind: 'completed', result: JSON.parse(only) as unknown };
    } catch {
      return { kind: 'completed', result: { text: only } };
    }
  }
  return { kind: 'completed', result: { content } };
}
