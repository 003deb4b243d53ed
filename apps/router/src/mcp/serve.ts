import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { InputSchemaReader } from './input-schemas.ts';
import { refuseInvalidParams } from './params.ts';
import { injectedApi } from './reach-api.ts';
import { buildMcpServer } from './server.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * Answers one MCP request: its own server and transport, whose tools call the HTTP API of `app`
 * with the request's key. The transport writes the answer itself.
 */
export async function serveMcp(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  schemas: InputSchemaReader,
): Promise<void> {
  const server = buildMcpServer({ api: injectedApi(app, request), schemas, version });
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
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
}
