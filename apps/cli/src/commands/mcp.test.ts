/**
 * `reach mcp` answers a client's mistake as JSON-RPC has it, never -32603 (internal error), and
 * stays up: the router's refusals (4xx) relayed with their code and message, messages nested too
 * deep to serialize, and lines that are no message. The process test runs the relay against a
 * stub `/mcp`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import { startStub, type StubServer } from '../testing/stub-server.ts';
import { readLine, refusalAnswer, refusalsAsAnswers } from './mcp.ts';

describe('refusalAnswer', () => {
  it("relays the router's 4xx {error, message} as -32602 with its code", () => {
    const text = JSON.stringify({ error: 'JSON_TOO_DEEP', message: 'body nests deeper' });
    expect(refusalAnswer(3, 400, text)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32602,
        message: 'JSON_TOO_DEEP: body nests deeper',
        data: { status: 400, error: 'JSON_TOO_DEEP' },
      },
    });
  });

  it('keeps the JSON-RPC error a reply carries', () => {
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
    expect(refusalAnswer('a', 400, text).error).toEqual({
      code: -32700,
      message: 'Parse error',
      data: { status: 400 },
    });
  });

  it('answers a 5xx -32603, and a reply that is not JSON with its start', () => {
    expect(refusalAnswer(1, 503, '{"error":"STORE_UNAVAILABLE"}').error.code).toBe(-32603);
    const html = refusalAnswer(1, 413, `<html>${'x'.repeat(1000)}</html>`).error;
    expect(html.code).toBe(-32602);
    expect(html.message.length).toBeLessThan(220);
    expect(refusalAnswer(1, 404, '').error.message).toBe('HTTP 404');
  });
});

describe('refusalsAsAnswers', () => {
  const reply = (status: number, body: string) => async () =>
    new Response(body, { status, headers: { 'content-type': 'application/json' } });
  const request = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' });

  it("turns a refusal of a request into a 200 answering it with the router's code", async () => {
    const fetch = refusalsAsAnswers(reply(400, '{"error":"JSON_TOO_DEEP","message":"deep"}'));
    const res = await fetch('http://r/mcp', { method: 'POST', body: request });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 9, error: { code: -32602 } });
  });

  it('leaves answers, and refusals of notifications, as they are', async () => {
    expect((await refusalsAsAnswers(reply(200, '{}'))('http://r', { body: request })).status).toBe(
      200,
    );
    const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect((await refusalsAsAnswers(reply(400, '{}'))('http://r', { body: note })).status).toBe(
      400,
    );
  });
});

describe('readLine', () => {
  it('reads a message', () => {
    expect(readLine('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toEqual({
      message: { jsonrpc: '2.0', id: 1, method: 'ping' },
    });
  });

  it('answers -32700 for a line that is not JSON, with id null', () => {
    for (const line of ['not json', '{', '', '\uFEFF{"jsonrpc":"2.0","id":1,"method":"ping"}'])
      expect(readLine(line)).toMatchObject({ answer: { id: null, error: { code: -32700 } } });
  });

  it('answers -32600 for JSON that is no message, with its id when it has one', () => {
    const proto = '{"__proto__":{"x":1},"jsonrpc":"2.0","id":66,"method":"resources/list"}';
    expect(readLine(proto)).toMatchObject({ answer: { id: 66, error: { code: -32600 } } });
    const deep = `{"jsonrpc":"2.0","id":"d","method":"ping","params":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    expect(readLine(deep)).toMatchObject({ answer: { id: 'd', error: { code: -32600 } } });
    for (const line of ['null', '[]', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}'])
      expect(readLine(line)).toMatchObject({ answer: { id: null, error: { code: -32600 } } });
  });
});

describe('reach mcp against a stub router', () => {
  let stub: StubServer;

  beforeAll(async () => {
    stub = await startStub({
      'POST /mcp': ({ body }) => {
        const m = JSON.parse(body) as { id?: unknown; method: string };
        if (m.id === undefined) return { status: 202, body: {} };
        if (m.method === 'deep')
          return {
            status: 400,
            body: { error: 'JSON_TOO_DEEP', message: 'body nests deeper than 65 levels' },
          };
        return { status: 200, body: { jsonrpc: '2.0', id: m.id, result: {} } };
      },
    });
  });

  afterAll(() => stub.close());

  it('answers each mistake as JSON-RPC has it, stays up, and exits 0 at the end of stdin', async () => {
    const bin = fileURLToPath(new URL('../../bin/reach.mjs', import.meta.url));
    const child = spawn(process.execPath, [bin, 'mcp'], {
      env: { ...process.env, REACH_ROUTER_URL: stub.url, REACH_KEY: '' },
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.resume();
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'deep', params: {} },
      `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":${deep(5000)}}}`,
      `{"jsonrpc":"2.0","id":3,"method":"ping","params":${deep(5000)}}`,
      'not json',
      '{"__proto__":{"x":1},"jsonrpc":"2.0","id":5,"method":"ping"}',
      { jsonrpc: '2.0', id: 4, method: 'ping' },
    ];
    for (const line of lines)
      child.stdin.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
    const answers = () =>
      out
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } });
    const byId = await waitFor(
      () => {
        const all = answers();
        return all.some((a) => a.id === 4) && all.length >= 6 ? all : undefined;
      },
      { timeoutMs: 15_000, message: 'reach mcp did not answer every line' },
    );
    const answerOf = (id: unknown) => byId.filter((a) => a.id === id);
    expect(answerOf(1)[0]?.error).toMatchObject({ code: -32602, message: /^JSON_TOO_DEEP: / });
    expect(answerOf(2)[0]?.error).toMatchObject({ code: -32602, message: /^JSON_TOO_DEEP: / });
    expect(answerOf(3)[0]?.error?.code).toBe(-32600);
    expect(answerOf(null)[0]?.error?.code).toBe(-32700);
    expect(answerOf(5)[0]?.error?.code).toBe(-32600);
    expect(answerOf(4)[0]).toMatchObject({ result: {} });
    expect(byId.some((a) => a.error?.code === -32603)).toBe(false);
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});
