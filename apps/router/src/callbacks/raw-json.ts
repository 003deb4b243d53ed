import type { CallbacksReply } from '@agent-reach/protocol';

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

/** A reply object as JSON, its `result` spliced in as text when it is {@link RawJson}. */
export function jsonWithRawResult(value: { result?: unknown }): string {
  const { result } = value;
  if (!(result instanceof RawJson)) return JSON.stringify(value);
  const { result: _raw, ...rest } = value;
  const head = JSON.stringify(rest);
  return head === '{}'
    ? `{"result":${result.text}}`
    : `${head.slice(0, -1)},"result":${result.text}}`;
}

/** `GET /v1/callbacks/:topic`'s reply as JSON, each result spliced in ({@link jsonWithRawResult}). */
export function callbacksReplyJson(reply: CallbacksReply): string {
  let out = '{"items":[';
  for (let i = 0; i < reply.items.length; i++) {
    if (i > 0) out += ',';
    out += jsonWithRawResult(reply.items[i] as { result?: unknown });
  }
  return `${out}],"cursor":${JSON.stringify(reply.cursor)}}`;
}
