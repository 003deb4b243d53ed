import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { listen, type DemoServer, type DemoServerOptions } from './listen.ts';
import { wordCountServer } from './mcp-word-count.ts';
import { readBody } from './requests.ts';

/** Where the server answers MCP. */
const MCP_PATH = '/mcp';

function rpcError(res: ServerResponse, status: number, message: string): void {
  const text = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

/**
 * Starts an MCP server over Streamable HTTP (stateful: one session per client, as a cancel is a
 * separate POST that must reach the server that runs the call) with the one tool `word_count`.
 * Its URL is the MCP endpoint, `<base>/mcp`. A request with an unknown session id gets 404, so a
 * client knows to start a new session. A cancelled call is reported to `onCancel` with its
 * JSON-RPC request id, and the SSE stream that carried it is closed, since no reply will come.
 */
export async function startMcpServer(options: DemoServerOptions = {}): Promise<DemoServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const open = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const mcp = wordCountServer((requestId) => {
      options.onCancel?.(requestId);
      setImmediate(() => transport.closeSSEStream(requestId));
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if ((req.url ?? '/').split('?')[0] !== MCP_PATH) return rpcError(res, 404, 'not found');
    const body: unknown = req.method === 'POST' ? JSON.parse(await readBody(req)) : undefined;
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const transport = sessions.get(id);
      if (!transport) return rpcError(res, 404, 'session not found');
      return transport.handleRequest(req, res, body);
    }
    if (req.method === 'POST' && isInitializeRequest(body)) return open(req, res, body);
    return rpcError(res, 400, 'no session: send initialize first');
  };

  const server = createServer((req, res) => {
    answer(req, res).catch(() => {
      if (!res.headersSent) rpcError(res, 400, 'bad request');
      else res.destroy();
    });
  });
  const running = await listen(server, options);
  return {
    url: `${running.url}${MCP_PATH}`,
    close: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      await running.close();
    },
  };
}
