/**
 * The MCP endpoint client against the demo MCP server (Streamable HTTP) on 127.0.0.1: tools are
 * discovered with their input schemas; calls map structured, plain-text and error replies;
 * progress notifications arrive and keep a call alive past its timeout; a cancel reaches the
 * tool as `notifications/cancelled`; a restarted server (its session lost) is reconnected to; a
 * closed port is unreachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import { startMcpServer, type DemoServer } from '../demo/index.ts';
import { McpEndpointClient } from './mcp-client.ts';
import { probeTcp } from './probes.ts';
import { endpointTarget, recordedCall, refusingUrl } from './testing/calls.ts';

let demo: DemoServer;
const cancelled: string[] = [];
let mcp: McpEndpointClient;

beforeAll(async () => {
  demo = await startMcpServer({ onCancel: (id) => cancelled.push(id) });
  mcp = new McpEndpointClient(endpointTarget('mcp', demo.url));
});

afterAll(async () => {
  await mcp?.close();
  await demo?.close();
});

const wordCount = (payload: unknown) =>
  recordedCall({ remoteName: 'word_count', capability: 'demo.word_count', payload });

describe('McpEndpointClient', () => {
  it('discovers the tools with their input schemas', async () => {
    const found = await mcp.discover();
    expect(found.capabilities).toHaveLength(1);
    expect(found.capabilities[0]).toMatchObject({
      remoteName: 'word_count',
      inputSchema: { type: 'object', required: ['text'] },
    });
  });

  it('completes with the structured content, or the text when there is none', async () => {
    expect(await mcp.call(wordCount({ text: 'a b c' }).req)).toEqual({
      kind: 'completed',
      result: { words: 3, characters: 5 },
    });
    expect(await mcp.call(wordCount({ text: 'a b c', plain: true }).req)).toEqual({
      kind: 'completed',
      result: { text: '3 words' },
    });
  });

  it('maps a tool error to HANDLER_ERROR and a protocol error to MCP_ERROR', async () => {
    expect(await mcp.call(wordCount({ text: 'x', fail: true }).req)).toEqual({
      kind: 'failed',
      code: 'HANDLER_ERROR',
      error: 'asked to fail',
      retryable: false,
    });
    // A string payload goes as { input }, which has no `text`: the server refuses the arguments.
    expect(await mcp.call(wordCount('a b').req)).toMatchObject({
      kind: 'failed',
      code: 'MCP_ERROR',
      retryable: false,
    });
  });

  it('reports progress notifications', async () => {
    const call = wordCount({ text: 'a b', delay_ms: 30, progress_steps: 3 });
    expect(await mcp.call(call.req)).toMatchObject({ kind: 'completed' });
    expect(call.progress).toEqual(
      [1, 2, 3].map((n) => ({ progress: n, total: 3, message: `step ${n}` })),
    );
  });

  it('times out a silent call, but not one that keeps reporting progress', async () => {
    const quick = new McpEndpointClient(endpointTarget('mcp', demo.url, { timeoutMs: 300 }));
    try {
      expect(await quick.call(wordCount({ text: 'a', delay_ms: 900 }).req)).toMatchObject({
        kind: 'failed',
        code: 'ENDPOINT_TIMEOUT',
        retryable: true,
      });
      const chatty = wordCount({ text: 'a', delay_ms: 900, progress_steps: 9 });
      expect(await quick.call(chatty.req)).toMatchObject({ kind: 'completed' });
    } finally {
      await quick.close();
    }
  });

  it('cancels: the tool sees notifications/cancelled', async () => {
    const before = cancelled.length;
    const call = wordCount({ text: 'a', delay_ms: 30_000, progress_steps: 100 });
    const running = mcp.call(call.req);
    await waitFor(() => call.progress.length > 0, { message: 'first progress' });
    call.stop('cancelled');
    expect(await running).toMatchObject({ kind: 'failed', code: 'CANCELLED', retryable: false });
    await waitFor(() => cancelled.length > before, { message: 'the tool saw the cancel' });
  });

  it('opens a new session when the server lost its own, for a call and for discovery', async () => {
    const restart = async () => {
      const port = Number(new URL(demo.url).port);
      await demo.close();
      // Once the port refuses connections, the client has seen its pooled sockets close too.
      await waitFor(async () => !(await probeTcp(demo.url, AbortSignal.timeout(1_000))), {
        message: 'old server gone',
      });
      demo = await startMcpServer({ port, onCancel: (id) => cancelled.push(id) });
    };
    await restart();
    // The session id the client holds is unknown to the new server (404): a new session is made.
    expect(await mcp.call(wordCount({ text: 'again' }).req)).toMatchObject({
      kind: 'completed',
      result: { words: 1 },
    });
    await restart();
    expect((await mcp.discover()).capabilities.map((c) => c.remoteName)).toEqual(['word_count']);
  });

  it('says a refused connection is unreachable, and probes with a ping', async () => {
    const closed = new McpEndpointClient(endpointTarget('mcp', await refusingUrl('/mcp')));
    expect(await closed.call(wordCount({ text: 'a' }).req)).toMatchObject({
      kind: 'failed',
      code: 'ENDPOINT_UNREACHABLE',
      retryable: true,
      unreachable: true,
    });
    const signal = AbortSignal.timeout(5_000);
    expect(await closed.probe(signal)).toBe(false);
    expect(await mcp.probe(signal)).toBe(true);
    await closed.close();
  });
});
