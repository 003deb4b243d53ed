/**
 * The A2A endpoint client against the demo A2A server (the A2A SDK's own server pieces) on
 * 127.0.0.1: the card's skills are discovered; a streamed call reports the working status and the
 * summary's chunks and completes with the joined summary; a server whose card says no streaming
 * is called with a blocking SendMessage; failed and rejected tasks map to A2A_FAILED; a cancel
 * (and a timeout) sends CancelTask, which the server's agent sees; a closed port is unreachable;
 * a card naming another host for its calls is refused (the relay calls only the declared host).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import { startA2AServer, startHttpServer, type DemoServer } from '../demo/index.ts';
import { A2AEndpointClient } from './a2a-client.ts';
import { endpointTarget, recordedCall, refusingUrl } from './testing/calls.ts';

const TEXT = 'one two three four five six seven eight nine ten eleven twelve thirteen';
const SUMMARY = 'one two three four five six seven eight nine ten eleven twelve …';

let streaming: DemoServer;
let blocking: DemoServer;
let elsewhere: DemoServer;
const cancelled: string[] = [];

beforeAll(async () => {
  streaming = await startA2AServer({ onCancel: (id) => cancelled.push(id) });
  blocking = await startA2AServer({ streaming: false });
  // Its card sends calls to another host: 127.0.0.2 instead of the declared 127.0.0.1.
  elsewhere = await startA2AServer({
    serviceUrl: (own) => own.replace('127.0.0.1', '127.0.0.2'),
    onCancel: (id) => cancelled.push(id),
  });
});

afterAll(async () => {
  await streaming?.close();
  await blocking?.close();
  await elsewhere?.close();
});

const client = (url = streaming.url, overrides = {}) =>
  new A2AEndpointClient(endpointTarget('a2a', url, overrides));
const summarize = { remoteName: 'summarize', capability: 'demo.summarize' };

describe('A2AEndpointClient', () => {
  it('discovers the card’s skills and returns the card', async () => {
    const found = await client().discover();
    expect(found.capabilities).toEqual([{ remoteName: 'summarize' }]);
    expect(found.card).toMatchObject({
      name: 'Demo summarizer',
      capabilities: { streaming: true },
      skills: [{ id: 'summarize' }],
    });
  });

  it('streams a call: the status as progress, artifact parts as chunks, the summary as result', async () => {
    const call = recordedCall({ ...summarize, payload: { text: TEXT } });
    const outcome = await client().call(call.req);
    expect(outcome).toEqual({ kind: 'completed', result: { text: SUMMARY } });
    expect(call.progress).toEqual([{ state: 'working', message: 'summarizing' }]);
    expect(call.chunks).toEqual([
      'one two three four five six ',
      'seven eight nine ten eleven twelve …',
    ]);
  });

  it('refuses a card that names another host for its calls: nothing is sent there', async () => {
    const call = recordedCall({ ...summarize, payload: { text: TEXT } });
    const outcome = await client(elsewhere.url).call(call.req);
    expect(outcome).toMatchObject({ kind: 'failed' });
    expect(JSON.stringify(outcome)).toContain('not its declared host 127.0.0.1');
    expect(call.progress).toEqual([]);
  });

  it('sends a string payload as text, and a server without streaming gets SendMessage', async () => {
    const call = recordedCall({ ...summarize, payload: 'brief text here' });
    expect(await client(blocking.url).call(call.req)).toEqual({
      kind: 'completed',
      result: { text: 'brief text here' },
    });
    expect(call.chunks).toEqual([]);
  });

  it('maps a failed task (retryable) and a rejected one (not) to A2A_FAILED', async () => {
    expect(
      await client().call(recordedCall({ ...summarize, payload: { fail: true } }).req),
    ).toEqual({ kind: 'failed', code: 'A2A_FAILED', error: 'asked to fail', retryable: true });
    expect(
      await client(blocking.url).call(
        recordedCall({ ...summarize, payload: { reject: true } }).req,
      ),
    ).toEqual({ kind: 'failed', code: 'A2A_FAILED', error: 'asked to reject', retryable: false });
  });

  it('sends CancelTask on cancel; the agent sees it for the task’s context', async () => {
    const call = recordedCall({ ...summarize, payload: { text: TEXT, delay_ms: 30_000 } });
    const running = client().call(call.req);
    await waitFor(() => call.progress.length > 0, { message: 'working status' });
    call.stop('cancelled');
    expect(await running).toMatchObject({ kind: 'failed', code: 'CANCELLED', retryable: false });
    // The context id is the task's id: every attempt of a task shares it.
    expect(cancelled).toContain(call.req.taskId);
  });

  it('cancels the A2A task when the call times out', async () => {
    const call = recordedCall({ ...summarize, payload: { text: TEXT, delay_ms: 30_000 } });
    const outcome = await client(streaming.url, { timeoutMs: 300 }).call(call.req);
    expect(outcome).toMatchObject({ kind: 'failed', code: 'ENDPOINT_TIMEOUT', retryable: true });
    expect(cancelled).toContain(call.req.taskId);
  });

  it('says a refused connection is unreachable', async () => {
    expect(await client(await refusingUrl()).call(recordedCall(summarize).req)).toMatchObject({
      kind: 'failed',
      code: 'ENDPOINT_UNREACHABLE',
      retryable: true,
      unreachable: true,
    });
  });

  it('maps an HTTP error of the card fetch as an HTTP endpoint’s', async () => {
    const plain = await startHttpServer();
    try {
      // The plain endpoint answers a GET of the card with 405.
      expect(await client(plain.url).call(recordedCall(summarize).req)).toMatchObject({
        kind: 'failed',
        code: 'HTTP_405',
        retryable: false,
      });
    } finally {
      await plain.close();
    }
  });

  it('probes by fetching the card', async () => {
    const signal = AbortSignal.timeout(5_000);
    expect(await client().probe(signal)).toBe(true);
    expect(await client(await refusingUrl()).probe(signal)).toBe(false);
  });
});
