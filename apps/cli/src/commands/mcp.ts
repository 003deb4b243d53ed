import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  JSONRPCMessageSchema,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '@agent-reach/protocol';
import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';

/** The router's MCP endpoint (apps/router/src/mcp/route.ts). */
const MCP_PATH = '/mcp';

type RequestId = string | number;

/**
 * Most levels a message may nest, as the router's `/mcp` takes a body (the message itself one
 * level, its params' values at most MAX_JSON_DEPTH). Checked here too: one nested thousands of
 * levels deep cannot even be serialized (`JSON.stringify` recurses).
 */
const MAX_MESSAGE_DEPTH = MAX_JSON_DEPTH + 1;

/** Most characters of a reply that is not JSON kept in an answer's message. */
const MAX_TEXT_IN_MESSAGE = 200;

/** An error answer: a JSON-RPC error of `code` to request `id`. */
function rpcError(
  id: RequestId,
  code: number,
  message: string,
  data?: Record<string, unknown>,
): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } };
}

/**
 * The answer to request `id` that the router refused over HTTP with `status` and body `text`:
 * the JSON-RPC error its reply carries (what the transport refuses, e.g. a message it cannot
 * parse), else its `{error, message}` as -32602 for a 4xx (the request as sent is at fault) or
 * -32603 for a 5xx, with the router's code and status as `data`.
 */
export function refusalAnswer(id: RequestId, status: number, text: string): JSONRPCErrorResponse {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const rpc = b.error as { code?: unknown; message?: unknown } | undefined;
  if (typeof rpc === 'object' && rpc !== null && Number.isSafeInteger(rpc.code)) {
    const message = typeof rpc.message === 'string' ? rpc.message : `HTTP ${status}`;
    return rpcError(id, rpc.code as number, message, { status });
  }
  const code = status >= 400 && status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  if (typeof b.error === 'string') {
    const message = typeof b.message === 'string' ? `${b.error}: ${b.message}` : b.error;
    return rpcError(id, code, message, { status, error: b.error });
  }
  const shown = text.trim().slice(0, MAX_TEXT_IN_MESSAGE);
  return rpcError(id, code, `HTTP ${status}${shown === '' ? '' : `: ${shown}`}`, { status });
}

/** The id of the request a relayed body holds, if it is one (the relay posts one message each). */
function requestIdIn(body: RequestInit['body']): RequestId | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const message = JSON.parse(body) as unknown;
    return isJSONRPCRequest(message) ? message.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `fetch` for the relay's HTTP transport: the router's refusal of a request (4xx, 5xx) comes
 * back as the JSON-RPC error answering it ({@link refusalAnswer}), which the transport relays
 * as any answer. Left alone, the transport throws with the reply folded into its message.
 */
export function refusalsAsAnswers(fetchImpl: FetchLike): FetchLike {
  return async (url, init) => {
    const res = await fetchImpl(url, init);
    const id = res.ok ? undefined : requestIdIn(init?.body);
    if (id === undefined) return res;
    const answer = refusalAnswer(id, res.status, await res.text().catch(() => ''));
    return new Response(JSON.stringify(answer), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
}

/** The answer to a stdin line that holds no message: JSON-RPC's `id` is null when none was read. */
export interface LineAnswer {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string };
}

/** The id a value that is no valid message carries, if it has one of an id's types; else null. */
function idIn(value: unknown): RequestId | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  if (typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id))) return id;
  return null;
}

/**
 * A stdin line as the relay reads it: the JSON-RPC message it holds, or the answer JSON-RPC owes
 * a line that holds none: -32700 for a line that is not JSON, -32600 (with the line's id, when it
 * has one) for JSON that is no message, such as params that are not an object or a key the
 * message schema does not take (`__proto__`).
 */
export function readLine(line: string): { message: JSONRPCMessage } | { answer: LineAnswer } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    const error = { code: ErrorCode.ParseError, message: 'Parse error: the line is not JSON' };
    return { answer: { jsonrpc: '2.0', id: null, error } };
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { message: parsed.data };
  const issue = parsed.error.issues[0];
  const at = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
  const message = `Invalid Request: not a JSON-RPC 2.0 message${issue ? ` (${at}${issue.message})` : ''}`;
  return {
    answer: {
      jsonrpc: '2.0',
      id: idIn(value),
      error: { code: ErrorCode.InvalidRequest, message },
    },
  };
}

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
    fetch: refusalsAsAnswers(fetch),
  });
  const why = (err: unknown) => (err instanceof Error ? err.message : String(err));
  const warn = (what: string, err: unknown) => ctx.io.err(`reach mcp: ${what}: ${why(err)}\n`);
  // stdout carries one message a line, in the order written.
  const write = (message: JSONRPCMessage | LineAnswer) =>
    void process.stdout.write(`${JSON.stringify(message)}\n`);

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
    write(message);
  };

  const relay = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message)) {
      pending.add(message.id);
      if (isInitializeRequest(message)) initializing.add(message.id);
    }
    if (jsonDepthExceeds(message, MAX_MESSAGE_DEPTH)) {
      const tooDeep = `JSON_TOO_DEEP: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels of arrays and objects: a value in params may nest at most ${MAX_JSON_DEPTH}`;
      if (!isJSONRPCRequest(message)) return warn('stdin', tooDeep);
      return answer(rpcError(message.id, ErrorCode.InvalidParams, tooDeep));
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

  await http.start();
  // Read here rather than by the SDK's stdio transport, which reports a line it cannot read
  // without the line: a request's id would be lost, and with it the answer the client waits for.
  process.stdin.on('error', (err) => warn('stdin', err));
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    const read = readLine(line);
    if ('message' in read) return relay(read.message);
    warn('stdin', read.answer.error.message);
    write(read.answer);
  });
  await once(lines, 'close');
  if (pending.size > 0) await new Promise<void>((resolve) => (allAnswered = resolve));
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  await http.close();
  return 0;
}
