import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  ErrorCode,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';

/** The router's MCP endpoint (apps/router/src/mcp/route.ts). */
const MCP_PATH = '/mcp';

type RequestId = string | number;

/**
 * `reach mcp`: an MCP server on stdin/stdout for LLM clients. It relays each JSON-RPC message to
 * the router's Streamable HTTP endpoint (`/mcp`, with the CLI's router URL and key) and each
 * answer back, so the tools and resources are the router's own, defined once (docs/MCP.md).
 * Runs until stdin ends and the requests read by then are answered; stdout carries the protocol
 * only, warnings go to stderr.
 */
export async function mcpCommand(ctx: Context): Promise<number> {
  if (ctx.args.length > 0) throw new UsageError('reach mcp takes no arguments');
  const endpoint = new URL(ctx.router.url(MCP_PATH));
  const http = new StreamableHTTPClientTransport(endpoint, {
    requestInit: {
      headers: ctx.apiKey === undefined ? {} : { authorization: `Bearer ${ctx.apiKey}` },
    },
  });
  const stdio = new StdioServerTransport();
  const why = (err: unknown) => (err instanceof Error ? err.message : String(err));
  const warn = (what: string, err: unknown) => ctx.io.err(`reach mcp: ${what}: ${why(err)}\n`);

  // Requests relayed and not answered yet; an initialize's answer sets the protocol version
  // later requests carry.
  const pending = new Set<RequestId>();
  const initializing = new Set<RequestId>();
  let allAnswered: () => void = () => undefined;
  const answer = (message: JSONRPCMessage) => {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = message.id;
      if (id !== undefined && pending.delete(id) && pending.size === 0) allAnswered();
    }
    void stdio.send(message);
  };

  stdio.onmessage = (message) => {
    if (isJSONRPCRequest(message)) {
      pending.add(message.id);
      if (isInitializeRequest(message)) initializing.add(message.id);
    }
    http.send(message).catch((err: unknown) => {
      if (!isJSONRPCRequest(message)) return warn(endpoint.href, err);
      // The client waits for every request's answer: a router that cannot be reached is one.
      answer({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: ErrorCode.InternalError, message: `${endpoint.href}: ${why(err)}` },
      });
    });
  };
  http.onmessage = (message) => {
    if (isJSONRPCResultResponse(message) && initializing.delete(message.id)) {
      const version = message.result.protocolVersion;
      if (typeof version === 'string') http.setProtocolVersion(version);
    }
    answer(message);
  };
  http.onerror = (err) => warn(endpoint.href, err);
  stdio.onerror = (err) => warn('stdin', err);

  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await http.start();
  await stdio.start();
  await ended;
  if (pending.size > 0) await new Promise<void>((resolve) => (allAnswered = resolve));
  await stdio.close();
  await http.close();
  return 0;
}
