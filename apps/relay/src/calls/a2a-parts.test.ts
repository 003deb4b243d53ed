import { describe, expect, it } from 'vitest';
import { Role, TaskState, type Part } from '@a2a-js/sdk';
import {
  ArtifactSet,
  chunkValue,
  joinTexts,
  messageRequest,
  partValue,
  resultOfParts,
  statusProgress,
} from './a2a-parts.ts';

const part = (content: Part['content'], mediaType = '', filename = ''): Part => ({
  content,
  metadata: undefined,
  filename,
  mediaType,
});
const text = (value: string) => part({ $case: 'text', value });
const data = (value: unknown) => part({ $case: 'data', value });

describe('messageRequest', () => {
  const call = { taskId: 'acme/t1', attempt: 2, remoteName: 'summarize' };

  it('sends an object payload as JSON text and as data, named for the task and attempt', () => {
    const request = messageRequest({ ...call, payload: { text: 'hi' } });
    const metadata = { skill: 'summarize', task_id: 'acme/t1', attempt: 2 };
    expect(request.metadata).toEqual(metadata);
    expect(request.message).toMatchObject({
      messageId: 'acme/t1#2',
      contextId: 'acme/t1',
      taskId: '',
      role: Role.ROLE_USER,
      metadata,
    });
    expect(request.message!.parts.map((p) => p.content)).toEqual([
      { $case: 'text', value: '{"text":"hi"}' },
      { $case: 'data', value: { text: 'hi' } },
    ]);
  });

  it('sends a string as it is and other values as JSON text, without a data part', () => {
    const contents = (payload: unknown) =>
      messageRequest({ ...call, payload }).message!.parts.map((p) => p.content);
    expect(contents('plain')).toEqual([{ $case: 'text', value: 'plain' }]);
    expect(contents([1, 2])).toEqual([{ $case: 'text', value: '[1,2]' }]);
    expect(contents(undefined)).toEqual([{ $case: 'text', value: 'null' }]);
  });
});

describe('parts as values', () => {
  it('maps each kind of part', () => {
    expect(partValue(text('a'))).toEqual({ text: 'a' });
    expect(partValue(data({ n: 1 }))).toEqual({ data: { n: 1 } });
    expect(partValue(part({ $case: 'url', value: 'https://x/y.png' }, 'image/png'))).toEqual({
      url: 'https://x/y.png',
      mediaType: 'image/png',
    });
    expect(partValue(part({ $case: 'raw', value: Buffer.from('hi') }, '', 'f.txt'))).toEqual({
      raw: 'aGk=',
      filename: 'f.txt',
    });
    expect(partValue(part(undefined))).toBeUndefined();
  });

  it('makes a chunk of a part: its text, its data, else the part value', () => {
    expect(chunkValue(text('a'))).toBe('a');
    expect(chunkValue(data([1]))).toEqual([1]);
    expect(chunkValue(part({ $case: 'url', value: 'u' }))).toEqual({ url: 'u' });
  });

  it('maps parts to a result: one text, one data, or the list', () => {
    expect(resultOfParts([])).toBeNull();
    expect(resultOfParts([text('a')])).toEqual({ text: 'a' });
    expect(resultOfParts([data({ n: 1 })])).toEqual({ n: 1 });
    expect(resultOfParts([text('a'), data(2)])).toEqual({ parts: [{ text: 'a' }, { data: 2 }] });
  });

  it('joins consecutive texts only', () => {
    const joined = joinTexts([text('a'), text('b'), data(1), text('c')]);
    expect(joined.map(partValue)).toEqual([{ text: 'ab' }, { data: 1 }, { text: 'c' }]);
  });
});

describe('ArtifactSet', () => {
  const update = (artifactId: string, parts: Part[], append: boolean) => ({
    taskId: 't',
    contextId: 'c',
    artifact: { artifactId, name: '', description: '', parts, metadata: undefined, extensions: [] },
    append,
    lastChunk: false,
    metadata: undefined,
  });

  it('appends chunks of an artifact, replaces it otherwise, and joins its texts', () => {
    const set = new ArtifactSet();
    set.apply(update('a', [text('one ')], false));
    set.apply(update('a', [text('two')], true));
    set.apply(update('b', [data(1)], false));
    expect(set.parts().map(partValue)).toEqual([{ text: 'one two' }, { data: 1 }]);
    set.apply(update('b', [data(2)], false));
    expect(set.parts().map(partValue)).toEqual([{ text: 'one two' }, { data: 2 }]);
    expect(set.size).toBe(2);
  });
});

describe('statusProgress', () => {
  it('names the state and carries the message text', () => {
    const message = {
      messageId: 'm',
      contextId: '',
      taskId: '',
      role: Role.ROLE_AGENT,
      parts: [text('thinking')],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    expect(
      statusProgress({ state: TaskState.TASK_STATE_WORKING, message, timestamp: undefined }),
    ).toEqual({ state: 'working', message: 'thinking' });
    expect(
      statusProgress({ state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: '' }),
    ).toEqual({ state: 'submitted' });
  });
});
