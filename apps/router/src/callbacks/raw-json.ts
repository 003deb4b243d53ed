import type { CallbackItem, CallbacksReply, SubmitReply } from '@agent-reach/protocol';

/**
 * A result as the JSON text a callback topic holds, to go into a reply as it is instead of being
 * parsed and serialised again. The text is JSON: registry-sync took it from the agent's ack only
 * once it parsed (`decodeAck`), and nothing else writes results. A serializer that does not know
 * this class still gets it right, by `toJSON`.
 */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

const str = JSON.stringify;
const resultJson = (result: unknown): string =>
  result instanceof RawJson ? result.text : (str(result) ?? 'null');

// Written out field by field, in the schemas' order: cheaper than JSON.stringify of an object
// (and than the schema's fast-json-stringify function) for these fixed shapes.

/** One `CallbackItem` as JSON, its result spliced in when it is {@link RawJson}. */
export function callbackItemJson(item: CallbackItem): string {
  let out = `{"id":${str(item.id)},"task_id":${str(item.task_id)},"status":${str(item.status)},"capability":${str(item.capability)},"agent_id":${str(item.agent_id)},"attempt":${item.attempt}`;
  if (item.result !== undefined) out += `,"result":${resultJson(item.result)}`;
  if (item.error !== undefined) out += `,"error":${str(item.error)}`;
  if (item.duration_ms !== undefined) out += `,"duration_ms":${item.duration_ms}`;
  out += `,"completed_at":${item.completed_at}`;
  if (item.progress !== undefined) out += `,"progress":${resultJson(item.progress)}`;
  if (item.chunk !== undefined) out += `,"chunk":${str(item.chunk)}`;
  return `${out}}`;
}

/** `GET /v1/callbacks/:topic`'s reply as JSON, each result spliced in ({@link callbackItemJson}). */
export function callbacksReplyJson(reply: CallbacksReply): string {
  let out = '{"items":[';
  for (let i = 0; i < reply.items.length; i++) {
    if (i > 0) out += ',';
    out += callbackItemJson(reply.items[i] as CallbackItem);
  }
  return `${out}],"cursor":${str(reply.cursor)}}`;
}

/** A `SubmitReply` as JSON, its result spliced in when it is {@link RawJson}. */
export function submitReplyJson(reply: SubmitReply): string {
  let out = `{"task_id":${str(reply.task_id)},"status":${str(reply.status)},"agent_id":${str(reply.agent_id)},"stream":${str(reply.stream)},"message_id":${str(reply.message_id)}`;
  if (reply.result !== undefined) out += `,"result":${resultJson(reply.result)}`;
  if (reply.error !== undefined) out += `,"error":${str(reply.error)}`;
  return `${out}}`;
}
