import { describe, expect, it } from 'vitest';
import { readEventStream } from './http-sse.ts';

/** A body that delivers `pieces` as separate chunks. */
const body = (...pieces: string[]) =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of pieces) controller.enqueue(new TextEncoder().encode(piece));
        controller.close();
      },
    }),
  ).body;

const recorder = () => {
  const progress: unknown[] = [];
  const chunks: unknown[] = [];
  return {
    progress,
    chunks,
    req: {
      onProgress: (v: unknown) => void progress.push(v),
      onChunk: (v: unknown) => void chunks.push(v),
    },
  };
};

describe('readEventStream', () => {
  it('sends progress and chunks on, and ends with the result event', async () => {
    const r = recorder();
    const outcome = await readEventStream(
      body(
        'event: progress\ndata: {"p":1}\n\n',
        'data: {"a":',
        '1}\n\ndata: plain text\n\n',
        'event: result\ndata: 42\n\n',
      ),
      r.req,
    );
    expect(outcome).toEqual({ kind: 'completed', result: 42 });
    expect(r.progress).toEqual([{ p: 1 }]);
    expect(r.chunks).toEqual([{ a: 1 }, 'plain text']);
  });

  it('takes the last chunk as the result without a result event, null without chunks', async () => {
    const r = recorder();
    expect(await readEventStream(body('data: 1\n\nevent: part\ndata: 2\n\n'), r.req)).toEqual({
      kind: 'completed',
      result: 2,
    });
    expect(await readEventStream(body(': comment\n\n'), recorder().req)).toEqual({
      kind: 'completed',
      result: null,
    });
  });

  it('fails on an error event, with its code when it is one', async () => {
    expect(
      await readEventStream(
        body('event: error\ndata: {"message":"boom","code":"MODEL_DOWN","retryable":false}\n\n'),
        recorder().req,
      ),
    ).toEqual({ kind: 'failed', code: 'MODEL_DOWN', error: 'boom', retryable: false });
    expect(await readEventStream(body('event: error\ndata: oops\n\n'), recorder().req)).toEqual({
      kind: 'failed',
      code: 'HANDLER_ERROR',
      error: 'oops',
      retryable: true,
    });
  });
});
