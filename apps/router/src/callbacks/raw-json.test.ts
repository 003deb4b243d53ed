import { describe, expect, it } from 'vitest';
import type { CallbackItem, SubmitReply } from '@agent-reach/protocol';
import { callbackItemJson, callbacksReplyJson, RawJson, submitReplyJson } from './raw-json.ts';

const item = (extra: Partial<CallbackItem> = {}): CallbackItem => ({
  id: '1-0',
  task_id: 't"1',
  status: 'completed',
  capability: 'echo',
  agent_id: 'a-1',
  attempt: 1,
  completed_at: 5,
  ...extra,
});

const submitted: SubmitReply = {
  task_id: 't-1',
  status: 'completed',
  agent_id: 'a\\1',
  stream: 's',
  message_id: '2-0',
};

describe('replies with raw JSON results', () => {
  it('splice the stored text in: the same JSON as parsing and serialising it', () => {
    const text = '{"r":[1,2.5,"x\\"y"],"n":null}';
    const out = callbackItemJson(item({ result: new RawJson(text), duration_ms: 3 }));
    expect(out).toContain(`"result":${text}`);
    expect(JSON.parse(out)).toEqual(item({ result: JSON.parse(text), duration_ms: 3 }));
    expect(JSON.parse(submitReplyJson({ ...submitted, result: new RawJson('[7]') }))).toEqual({
      ...submitted,
      result: [7],
    });
  });

  it('write every field, a parsed result and an error as JSON.stringify would', () => {
    for (const one of [
      item(),
      item({ result: { a: 'b' } }),
      item({ status: 'failed', error: 'x\n"y' }),
    ])
      expect(JSON.parse(callbackItemJson(one))).toEqual(one);
    const failed = { ...submitted, status: 'failed' as const, error: 'boom' };
    expect(JSON.parse(submitReplyJson(failed))).toEqual(failed);
  });

  it('serialise a callbacks page with each result spliced in', () => {
    const reply = {
      items: [item({ result: new RawJson('"done"') }), item(), item({ result: new RawJson('[]') })],
      cursor: '3-0',
    };
    expect(JSON.parse(callbacksReplyJson(reply))).toEqual({
      items: [item({ result: 'done' }), item(), item({ result: [] })],
      cursor: '3-0',
    });
    expect(callbacksReplyJson({ items: [], cursor: '0' })).toBe('{"items":[],"cursor":"0"}');
  });

  it('read right where a serializer does not know them (toJSON)', () => {
    expect(JSON.stringify({ result: new RawJson('{"a":[1]}') })).toBe('{"result":{"a":[1]}}');
  });
});
