import { describe, expect, it } from 'vitest';
import { toolArguments, toolOutcome } from './mcp-results.ts';

const text = (t: string) => ({ type: 'text', text: t });

describe('toolArguments', () => {
  it('passes an object, and wraps anything else as { input }', () => {
    expect(toolArguments({ a: 1 })).toEqual({ a: 1 });
    expect(toolArguments('x')).toEqual({ input: 'x' });
    expect(toolArguments([1])).toEqual({ input: [1] });
    expect(toolArguments(null)).toEqual({ input: null });
  });
});

describe('toolOutcome', () => {
  it('prefers structured content', () => {
    expect(toolOutcome({ content: [text('{}')], structuredContent: { n: 1 } })).toEqual({
      kind: 'completed',
      result: { n: 1 },
    });
  });

  it('reads a single text as JSON when it is, else as { text }', () => {
    expect(toolOutcome({ content: [text('{"n":2}')] })).toEqual({
      kind: 'completed',
      result: { n: 2 },
    });
    expect(toolOutcome({ content: [text('hello')] })).toEqual({
      kind: 'completed',
      result: { text: 'hello' },
    });
  });

  it('keeps any other content as { content }', () => {
    const content = [text('a'), { type: 'image', data: 'AA==', mimeType: 'image/png' }];
    expect(toolOutcome({ content })).toEqual({ kind: 'completed', result: { content } });
    expect(toolOutcome({ content: [] })).toEqual({ kind: 'completed', result: { content: [] } });
  });

  it('fails an isError reply as HANDLER_ERROR, not retryable, with its text', () => {
    expect(toolOutcome({ isError: true, content: [text('no'), text('really')] })).toEqual({
      kind: 'failed',
      code: 'HANDLER_ERROR',
      error: 'no\nreally',
      retryable: false,
    });
    expect(toolOutcome({ isError: true })).toMatchObject({ error: 'the tool reported an error' });
  });

  it('takes a 2024-10-07 toolResult as the result', () => {
    expect(toolOutcome({ toolResult: { old: true } })).toEqual({
      kind: 'completed',
      result: { old: true },
    });
  });
});
