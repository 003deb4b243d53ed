import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { RequestMalformedError, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { DEFAULT_TENANT, ErrorReply, ID_PATTERN } from '@agent-reach/protocol';
import { httpError, principalOf, type KeyVerifier } from '@agent-reach/service-kit';
import type { SnapshotHolder } from '@agent-reach/dispatch';
import { SSE_HEADERS } from '../console/sse-client.ts';
import { capabilityCard, cardJson, fleetCard, type CardSource } from './cards.ts';
import {
  A2A_CALL,
  ReachA2AHandler,
  type A2ACall,
  type A2AHandlerOptions,
} from './request-handler.ts';
import { paramsProblem } from './rpc-params.ts';

/** What the A2A gateway needs: the handler's collaborators, the snapshot for cards, and auth. */
export interface A2ARouteDeps extends Omit<A2AHandlerOptions, 'fallbackCard'> {
  snapshot: SnapshotHolder;
  auth: { required: boolean; verifier: KeyVerifier };
}

/** A2A protocol versions the JSON-RPC endpoints take (`A2A-Version`; absent: by the method's name). */
const VERSIONS = new Set(['1.0', '0.3']);

/** How often a stream with nothing to say sends a comment line. */
const HEARTBEAT_MS = 15_000;

const BEARER = /^Bearer +([\x21-\x7e]{1,512})$/i;

const CapabilityParams = Type.Object({
  capability: Type.String({ pattern: ID_PATTERN, description: 'A capability name' }),
});

const CardReply = Type.Unknown({ description: 'An A2A AgentCard (A2A 1.0, protobuf JSON form)' });

const RPC_DESCRIPTION =
  'A2A JSON-RPC 2.0 (docs/A2A.md): SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask, Create/Get/List/DeleteTaskPushNotificationConfig (A2A 1.0), and their A2A 0.3 names (message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/set|get|list|delete). Streaming methods answer text/event-stream.';

const RpcReply = Type.Unknown({
  description: 'A JSON-RPC response, or for a streaming method a text/event-stream of them',
});

/** An error as a JSON-RPC error object of the call's protocol version. */
function rpcError(isLegacy: boolean, err: unknown): unknown {
  return isLegacy
    ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err)
    : JsonRpcTransportHandler.mapToJSONRPCError(err);
}

/** The base URL cards name: the scheme and host the request came to. */
function baseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/**
 * The A2A gateway (docs/A2A.md): the fleet's AgentCard at `/.well-known/agent-card.json`, one per
 * capability at `/a2a/<capability>/.well-known/agent-card.json`, and the JSON-RPC binding at
 * `/a2a/<capability>` (and `/a2a`, naming the capability in the message's metadata), served by
 * the SDK's JSON-RPC transport handlers over {@link ReachA2AHandler}.
 */
export const a2aRoutes: FastifyPluginAsyncTypebox<A2ARouteDeps> = async (app, deps) => {
  const source: CardSource = { snapshot: deps.snapshot, authRequired: deps.auth.required };
  const handler = new ReachA2AHandler({
    ...deps,
    fallbackCard: () => fleetCard(source, 'http://127.0.0.1', DEFAULT_TENANT),
  });
  const rpc = new JsonRpcTransportHandler(handler);
  const legacy = new LegacyJsonRpcTransportHandler(handler);

  /**
   * Whose capabilities a card lists: the cards are public (a client reads one to learn how to
   * authenticate), so without a key they list what the default tenant's callers may use; with a
   * valid key, what its tenant's may.
   */
  const cardTenant = async (request: FastifyRequest): Promise<string> => {
    if (!deps.auth.required) return principalOf(request).tenant;
    const header = request.headers.authorization;
    const key = typeof header === 'string' ? BEARER.exec(header.trim())?.[1] : undefined;
    const principal = key ? await deps.auth.verifier.verify(key) : undefined;
    return principal?.tenant ?? DEFAULT_TENANT;
  };

  app.get(
    '/.well-known/agent-card.json',
    {
      config: { auth: 'public' },
      schema: {
        summary: "The fleet's A2A AgentCard: one skill per live capability",
        response: { 200: CardReply, 503: ErrorReply },
      },
    },
    async (request, reply) => {
      const card = fleetCard(source, baseUrl(request), await cardTenant(request));
      return reply.header('cache-control', 'no-cache').send(cardJson(card));
    },
  );

  app.get(
    '/a2a/:capability/.well-known/agent-card.json',
    {
      config: { auth: 'public' },
      schema: {
        summary: "One capability's A2A AgentCard",
        params: CapabilityParams,
        response: { 200: CardReply, 400: ErrorReply, 404: ErrorReply, 503: ErrorReply },
      },
    },
    async (request, reply) => {
      const { capability } = request.params;
      const card = capabilityCard(source, baseUrl(request), capability, await cardTenant(request));
      if (!card)
        throw httpError(
          'CAPABILITY_NOT_FOUND',
          `no live agent serves capability ${capability}: see GET /.well-known/agent-card.json for those that do`,
        );
      return reply.header('cache-control', 'no-cache').send(cardJson(card));
    },
  );

  const serve = async (
    request: FastifyRequest,
    reply: FastifyReply,
    capability: string | undefined,
  ): Promise<unknown> => {
    const body = request.body as Record<string, unknown> | undefined;
    const method = typeof body?.method === 'string' ? body.method : '';
    const header = request.headers[A2A_VERSION_HEADER.toLowerCase()];
    const version = typeof header === 'string' && header !== '' ? header : undefined;
    // A2A 0.3 names its methods with a slash (message/send); 1.0 does not (SendMessage).
    const isLegacy = version === '0.3' || (version === undefined && method.includes('/'));
    if (version !== undefined && !VERSIONS.has(version)) {
      const error = JsonRpcTransportHandler.mapToJSONRPCError(
        new VersionNotSupportedError(
          `A2A-Version ${version} is not supported: send 1.0 (or 0.3 for the 0.3 method names)`,
        ),
      );
      return reply.send({ jsonrpc: '2.0', id: body?.id ?? null, error });
    }
    // Params of the wrong shape are the caller's mistake, refused before the SDK reads them.
    const problem = paramsProblem(method, body?.params);
    if (problem !== undefined) {
      const error = rpcError(isLegacy, new RequestMalformedError(problem));
      return reply.send({ jsonrpc: '2.0', id: body?.id ?? null, error });
    }
    const abort = new AbortController();
    // The response closes when it was sent or the caller went away: either ends a stream.
    reply.raw.once('close', () => abort.abort());
    const call: A2ACall = {
      principal: principalOf(request),
      capability,
      signal: abort.signal,
      traceparent: request.headers.traceparent,
    };
    const context = new ServerCallContext({
      requestedVersion: isLegacy ? '0.3' : '1.0',
      state: new Map([[A2A_CALL, call]]),
    });
    const out = await (isLegacy ? legacy : rpc).handle(body ?? {}, context);
    if (!(Symbol.asyncIterator in out)) return reply.send(out);
    // A stream: an error before its first event is an ordinary JSON-RPC reply, as the SDK's own
    // transports answer; after it, the error is the stream's last event.
    const events = out[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await events.next();
    } catch (err: unknown) {
      return reply.send({ jsonrpc: '2.0', id: body?.id ?? null, error: rpcError(isLegacy, err) });
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, SSE_HEADERS);
    // Nothing is written once the caller is gone.
    const write = (text: string): void => {
      if (!res.writableEnded && !res.destroyed) res.write(text);
    };
    // Comment lines keep a quiet stream (a long task without output) open through proxies.
    const heartbeat = setInterval(() => write(': ping\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    try {
      for (let next = first; !next.done && !abort.signal.aborted; next = await events.next())
        write(`data: ${JSON.stringify(next.value)}\n\n`);
    } catch (err: unknown) {
      request.log.warn({ err }, 'A2A stream failed');
      const error = { jsonrpc: '2.0', id: body?.id ?? null, error: rpcError(isLegacy, err) };
      write(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
    } finally {
      clearInterval(heartbeat);
      await events.return?.(undefined);
      if (!res.writableEnded) res.end();
    }
    return reply;
  };

  app.post(
    '/a2a/:capability',
    {
      schema: {
        summary: 'A2A JSON-RPC endpoint of one capability',
        description: RPC_DESCRIPTION,
        params: CapabilityParams,
        response: { 200: RpcReply, 400: ErrorReply, 401: ErrorReply, 503: ErrorReply },
      },
    },
    (request, reply) => serve(request, reply, request.params.capability),
  );

  app.post(
    '/a2a',
    {
      schema: {
        summary:
          "A2A JSON-RPC endpoint of the fleet: a message's metadata.capability names the capability",
        description: RPC_DESCRIPTION,
        response: { 200: RpcReply, 400: ErrorReply, 401: ErrorReply, 503: ErrorReply },
      },
    },
    (request, reply) => serve(request, reply, undefined),
  );
};
