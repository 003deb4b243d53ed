import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorReply } from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';
import type { InputSchemaReader } from './input-schemas.ts';
import { refuseInvalidParams } from './params.ts';
import { injectedApi } from './reach-api.ts';
import { buildMcpServer } from './server.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** The path of the MCP endpoint. */
export const MCP_PATH = '/mcp';

/** The keys that may use MCP: those that may submit and read tasks. */
const config = { roles: ['operator', 'caller'] as const };
/**
 * JSON-RPC, described by the MCP specification rather than OpenAPI: left out of /docs (and so of
 * the HTTP fuzz). The router's own refusals keep their usual shape.
 */
const schema = { hide: true, response: { 401: ErrorReply, 403: ErrorReply, 405: ErrorReply } };

/**
 * Serves the MCP server over Streamable HTTP at `POST /mcp`, stateless: each request gets its own
 * server and transport, and its tools call the HTTP API with the request's key (docs/MCP.md).
 * Installed on the root instance, whose `inject` the tools use.
 */
export function installMcp(app: FastifyInstance, deps: { schemas: InputSchemaReader }): void {
  app.post(MCP_PATH, { config, schema }, async (request, reply) => {
    const server = buildMcpServer({
      api: injectedApi(app, request),
      schemas: deps.schemas,
      version,
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // The transport writes the answer itself.
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      refuseInvalidParams(transport, (err) =>
        request.log.warn({ err }, 'MCP invalid-params answer not sent'),
      );
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err: unknown) {
      // Hijacked: fastify's error handler no longer answers for this request.
      request.log.error({ err }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw
          .writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
          .end(JSON.stringify({ error: 'INTERNAL', message: 'the MCP request failed' }));
      }
    }
  });
  // No server-sent stream and no session in stateless mode; MCP clients take 405 as "none".
  const notAllowed = async () => {
    throw httpError('METHOD_NOT_ALLOWED', `${MCP_PATH} takes JSON-RPC messages by POST only`);
  };
  app.get(MCP_PATH, { config, schema }, notAllowed);
  app.delete(MCP_PATH, { config, schema }, notAllowed);
}
