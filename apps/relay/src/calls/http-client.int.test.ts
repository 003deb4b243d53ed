/**
 * The HTTP endpoint client against real servers on 127.0.0.1: the demo endpoint (echo, SSE,
 * delays, asked-for statuses, /healthz) and a small server of this file for what the demo does
 * not do (headers seen, empty and non-JSON bodies). Cancels are seen by the server; a closed port
 * is unreachable.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import { startHttpServer, type DemoServer } from '../demo/index.ts';
import { HttpEndpointClient } from './http-client.ts';
import { endpointTarget, recordedCall, refusingUrl } from './testing/calls.ts';

let demo: DemoServer;
const cancelled: string[] = [];
let odd: Server;
let oddUrl: string;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  demo = await startHttpServer({ onCancel: (id) => cancelled.push(id) });
  odd = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    if (req.url === '/empty') res.writeHead(200).end();
    else if (req.url === '/text') res.writeHead(200, { 'content-type': 'text/plain' }).end('hi');
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await demo?.close();
  odd?.closeAllConnections();
  await new Promise((resolve) => odd?.close(resolve));
});

const client = (overrides = {}) =>
  new HttpEndpointClient(endpointTarget('http', `${demo.url}/run`, overrides));

describe('HttpEndpointClient.call', () => {
  it('completes with the JSON reply', async () => {
    const call = recordedCall({ payload: { n: 1 } });
    const outcome = await client().call(call.req);
    expect(outcome).toEqual({
      kind: 'completed',
      result: { echo: { n: 1 }, idempotency_key: call.req.taskId },
    });
  });

  it('sends the Reach headers over the declared ones', async () => {
    const target = endpointTarget('http', `${oddUrl}/capture`, {
      headers: { 'X-Api-Key': 'k1', 'Reach-Attempt': '99', Authorization: 'Bearer s' },
    });
    const call = recordedCall({ attempt: 3, capability: 'cap.one', deadlineMs: 1_900_000_000_000 });
    const outcome = await new HttpEndpointClient(target).call(call.req);
    expect(outcome).toEqual({ kind: 'completed', result: { ok: true } });
    const headers = seen.at(-1)!;
    expect(headers).toMatchObject({
      'idempotency-key': call.req.taskId,
      'reach-attempt': '3',
      'reach-capability': 'cap.one',
      'reach-deadline': '1900000000000',
      'x-api-key': 'k1',
      authorization: 'Bearer s',
      'content-type': 'application/json',
    });
    await new HttpEndpointClient(target).call(recordedCall().req);
    expect(seen.at(-1)).not.toHaveProperty('reach-deadline');
  });

  it('maps an empty 2xx body to null and a non-JSON one to RESULT_NOT_JSON', async () => {
    const empty = new HttpEndpointClient(endpointTarget('http', `${oddUrl}/empty`));
    expect(await empty.call(recordedCall().req)).toEqual({ kind: 'completed', result: null });
    const text = new HttpEndpointClient(endpointTarget('http', `${oddUrl}/text`));
    expect(await text.call(recordedCall().req)).toMatchObject({
      kind: 'failed',
      code: 'RESULT_NOT_JSON',
      retryable: false,
    });
  });

  it('streams an SSE reply: progress, chunks, then the result event', async () => {
    const call = recordedCall({ payload: { s: 'x' } });
    const sse = client({ headers: { accept: 'text/event-stream' } });
    const outcome = await sse.call(call.req);
    expect(outcome).toEqual({
      kind: 'completed',
      result: { echo: { s: 'x' }, idempotency_key: call.req.taskId },
    });
    expect(call.progress).toEqual([{ progress: 0.5 }]);
    expect(call.chunks).toEqual([{ part: 1 }, 'part 2']);
  });

  it('aborts on cancel, and the endpoint sees its client go', async () => {
    const call = recordedCall({ payload: { delay_ms: 30_000 } });
    const running = client({ headers: { accept: 'text/event-stream' } }).call(call.req);
    await waitFor(() => call.progress.length > 0, { message: 'first progress event' });
    call.stop('cancelled');
    expect(await running).toMatchObject({ kind: 'failed', code: 'CANCELLED', retryable: false });
    await waitFor(() => cancelled.includes(call.req.taskId), { message: 'server saw the cancel' });
  });

  it('fails retryable on the relay’s shutdown, the timeout; not retryable past the deadline', async () => {
    const slow = { payload: { delay_ms: 30_000 } };
    const shut = recordedCall(slow);
    shut.stop('shutdown');
    expect(await client().call(shut.req)).toMatchObject({
      code: 'RELAY_SHUTDOWN',
      retryable: true,
    });
    expect(await client({ timeoutMs: 150 }).call(recordedCall(slow).req)).toMatchObject({
      code: 'ENDPOINT_TIMEOUT',
      retryable: true,
    });
    const late = recordedCall({ ...slow, deadlineMs: Date.now() + 150 });
    expect(await client().call(late.req)).toMatchObject({
      code: 'DEADLINE_EXCEEDED',
      retryable: false,
    });
  });

  it('maps error statuses: 4xx not retryable, 408/429/5xx retryable, Retry-After kept', async () => {
    const asked = async (payload: Record<string, unknown>) =>
      client().call(recordedCall({ payload }).req);
    expect(await asked({ status: 400 })).toEqual({
      kind: 'failed',
      code: 'HTTP_400',
      error: '{"error":"asked for 400"}',
      retryable: false,
    });
    expect(await asked({ status: 404 })).toMatchObject({ code: 'HTTP_404', retryable: false });
    expect(await asked({ status: 408 })).toMatchObject({ code: 'HTTP_408', retryable: true });
    expect(await asked({ status: 429, retry_after: 7 })).toMatchObject({
      code: 'HTTP_429',
      retryable: true,
      retryAfterMs: 7000,
    });
    const at = new Date(Date.now() + 60_000).toUTCString();
    const unavailable = await asked({ status: 503, retry_after: at });
    expect(unavailable).toMatchObject({ code: 'HTTP_503', retryable: true });
    const wait = (unavailable as { retryAfterMs: number }).retryAfterMs;
    expect(wait).toBeGreaterThan(55_000);
    expect(wait).toBeLessThanOrEqual(60_000);
    const failed = await asked({ status: 500, retry_after: 9 });
    expect(failed).toMatchObject({ code: 'HTTP_500', retryable: true });
    expect(failed).not.toHaveProperty('retryAfterMs');
  });

  it('does not follow a redirect', async () => {
    expect(await client().call(recordedCall({ payload: { status: 302 } }).req)).toEqual({
      kind: 'failed',
      code: 'HTTP_302',
      error: 'redirect to /moved not followed',
      retryable: false,
    });
  });

  it('says a refused connection is unreachable', async () => {
    const target = endpointTarget('http', await refusingUrl('/run'));
    expect(await new HttpEndpointClient(target).call(recordedCall().req)).toMatchObject({
      kind: 'failed',
      code: 'ENDPOINT_UNREACHABLE',
      retryable: true,
      unreachable: true,
    });
  });
});

describe('HttpEndpointClient.probe and discover', () => {
  it('probes the health URL when declared, else by TCP connect', async () => {
    const signal = AbortSignal.timeout(5_000);
    expect(await client({ healthUrl: `${demo.url}/healthz` }).probe(signal)).toBe(true);
    expect(await client({ healthUrl: `${demo.url}/nothing` }).probe(signal)).toBe(false);
    expect(await client().probe(signal)).toBe(true);
    const closed = new HttpEndpointClient(endpointTarget('http', await refusingUrl()));
    expect(await closed.probe(signal)).toBe(false);
  });

  it('discovers nothing: HTTP capabilities are declared', async () => {
    expect(await client().discover()).toEqual({ capabilities: [] });
  });
});
