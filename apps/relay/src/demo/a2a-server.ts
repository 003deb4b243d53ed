import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  A2A_PROTOCOL_VERSION,
  A2A_VERSION_HEADER,
  AgentCard,
  formatSSEEvent,
  SSE_HEADERS,
} from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  validateVersion,
} from '@a2a-js/sdk/server';
import { SummarizeExecutor } from './a2a-summarizer.ts';
import { listen, type DemoServer, type DemoServerOptions } from './listen.ts';
import { readBody } from './requests.ts';

/** Options of the demo A2A server. */
export interface A2AServerOptions extends DemoServerOptions {
  /** Whether the card says `capabilities.streaming` (SendStreamingMessage works either way). @default true */
  streaming?: boolean;
  /** The JSON-RPC URL the card names, from the server's own. @default its own URL */
  serviceUrl?: (own: string) => string;
}

const CARD_PATH = '/.well-known/agent-card.json';

/** The demo agent's card, its JSON-RPC interface at `url`. */
function demoCard(url: string, streaming: boolean): AgentCard {
  return {
    name: 'Demo summarizer',
    description: 'Summarizes text: the first words of it, streamed in two chunks',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'summarize',
        name: 'Summarize',
        description: 'The first twelve words of a text (`text` of a data part, or the text parts)',
        tags: ['text'],
        examples: ['Summarize: the quick brown fox…'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Serves the card and the JSON-RPC binding (SSE for the streaming methods) over node:http. */
function a2aListener(handler: DefaultRequestHandler, card: AgentCard) {
  const rpc = new JsonRpcTransportHandler(handler);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === CARD_PATH)
      return sendJson(res, 200, AgentCard.toJSON(card));
    if (req.method !== 'POST' || path !== '/') return sendJson(res, 404, { error: 'not found' });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return sendJson(res, 200, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'the body is not JSON' },
      });
    }
    const id = (body as { id?: unknown }).id ?? null;
    try {
      const version = req.headers[A2A_VERSION_HEADER.toLowerCase()];
      const context = defaultServerCallContextBuilder({
        extensions: undefined,
        user: new UnauthenticatedUser(),
        headers: req.headers,
        requestedVersion: typeof version === 'string' ? version : undefined,
      });
      validateVersion(context.requestedVersion, card, 'JSONRPC');
      const reply = await rpc.handle(body as Record<string, unknown>, context);
      if (!(Symbol.asyncIterator in reply)) return sendJson(res, 200, reply);
      res.writeHead(200, SSE_HEADERS);
      // A client that goes away ends the stream; the task goes on until cancelled.
      res.once('close', () => void reply.return(undefined));
      for await (const event of reply) res.write(formatSSEEvent(event));
      res.end();
    } catch (err) {
      const error = JsonRpcTransportHandler.mapToJSONRPCError(err);
      if (!res.headersSent) return sendJson(res, 200, { jsonrpc: '2.0', id, error });
      res.end(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error })}\n\n`);
    }
  };
}

/**
 * Starts a stock A2A server (the A2A SDK's request handler and JSON-RPC transport handler, over
 * node:http) that knows nothing of Agent-Reach: its card at `/.well-known/agent-card.json`, the
 * JSON-RPC binding at `/`, one skill `summarize` (`SummarizeExecutor`). Tasks live in memory.
 */
export async function startA2AServer(options: A2AServerOptions = {}): Promise<DemoServer> {
  const server: Server = createServer();
  const running = await listen(server, options);
  // The card names the server's URL, known once it listens; no request is read before this
  // handler is attached, as nothing else runs in between.
  const own = `${running.url}/`;
  const card = demoCard(options.serviceUrl?.(own) ?? own, options.streaming ?? true);
  const executor = new SummarizeExecutor(options.onCancel);
  const listener = a2aListener(
    new DefaultRequestHandler(card, new InMemoryTaskStore(), executor),
    card,
  );
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    listener(req, res).catch(() => res.destroy());
  });
  return running;
}
