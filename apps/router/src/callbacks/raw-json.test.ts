import { describe, expect, it } from 'vitest';
import type { CallbackItem } from '@agent-reach/protocol';
import { callbacksReplyJson, jsonWithRawResult, RawJson } from './raw-json.ts';

const item = (result?: unknown): CallbackItem => ({
  id: '1-0',
  task_id: 't"1',
  status: 'completed',
  capability: 'echo',
  agent_id: 'a-1',
  attempt: 1,
  completed_at: 5,
  ...(result === undefined ? {} : { result }),
});

describe('raw JSON results', () => {
  it('splice the stored text into the reply: the same JSON as parsing and serialising it', () => {
    const text = '{"r":[1,2.5,"x\\"y"],"n":null}';
    const out = jsonWithRawResult(item(new RawJson(text)));
    expect(out).toContain(`"result":${text}`);
    expect(JSON.parse(out)).toEqual(item(JSON.parse(text)));
  });

  it('leave replies without a raw result to JSON.stringify', () => {
    expect(jsonWithRawResult(item())).toBe(JSON.stringify(item()));
    expect(jsonWithRawResult(item({ a: 1 }))).toBe(JSON.stringify(item({ a: 1 })));
    expect(jsonWithRawResult({ result: new RawJson('7') })).toBe('{"result":7}');
  });

  it('serialise a callbacks page with each result spliced in', () => {
    const reply = {
      items: [item(new RawJson('"done"')), item(), item(new RawJson('[]'))],
      cursor: '3-0',
    };
    expect(JSON.parse(callbacksReplyJson(reply))).toEqual({
      items: [item('done'), item(), item([])],
      cursor: '3-0',
    });
    expect(callbacksReplyJson({ items: [], cursor: '0' })).toBe('{"items":[],"cursor":"0"}');
  });

  it('read right where a serializer does not know them (toJSON)', () => {
    expect(JSON.stringify({ result: new RawJson('{"a":[1]}') })).toBe('{"result":{"a":[1]}}');
  });
});
