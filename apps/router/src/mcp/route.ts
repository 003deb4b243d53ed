import type { FastifyInstance } from 'fastify';
import { ErrorReply } from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';
import type { InputSchemaReader } from './input-schemas.ts';
import type { serveMcp } from './serve.ts';

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
 * The MCP SDK and the server built on it, loaded by the first MCP request: a router nobody asks
 * over MCP does not hold them (docs/MCP.md says how much that saves).
 */
let serving: Promise<{ serveMcp: typeof serveMcp }> | undefined;

/**
 * Serves the MCP server over Streamable HTTP at `POST /mcp`, stateless: each request gets its own
 * server and transport, and its tools call the HTTP API with the request's key (docs/MCP.md).
 * Installed on the root instance, whose `inject` the tools use.
 */
export function installMcp(app: FastifyInstance, deps: { schemas: InputSchemaReader }): void {
  app.post(MCP_PATH, { config, schema }, async (request, reply) => {
    const serve = await (serving ??= import('./serve.ts'));
    await serve.serveMcp(app, request, reply, deps.schemas);
  });
  // No server-sent stream and no session in stateless mode; MCP clients take 405 as "none".
  const notAllowed = async () => {
    throw httpError('METHOD_NOT_ALLOWED', `${MCP_PATH} takes JSON-RPC messages by POST only`);
  };
  app.get(MCP_PATH, { config, schema }, notAllowed);
  app.delete(MCP_PATH, { config, schema }, notAllowed);
}
