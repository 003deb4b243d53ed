import type { FastifyInstance, FastifyRequest } from 'fastify';

/** One reply of the router's HTTP API: its status and parsed JSON body. */
export interface ApiReply {
  status: number;
  body: unknown;
}

/**
 * The router's HTTP API as the MCP tools call it. Every tool is a call of the API an HTTP caller
 * makes, so keys, tenants, checks and error codes are the API's own.
 */
export interface ReachApi {
  get(path: string): Promise<ApiReply>;
  post(path: string, body?: unknown): Promise<ApiReply>;
}

/**
 * The API of `app` called in-process (`inject`, no socket) with the key of the MCP request, so a
 * tool sees exactly what that key may see over HTTP.
 */
export function injectedApi(app: FastifyInstance, request: FastifyRequest): ReachApi {
  const headers: Record<string, string> = {};
  const authorization = request.headers.authorization;
  if (authorization !== undefined) headers.authorization = authorization;
  const call = async (method: 'GET' | 'POST', url: string, body?: unknown): Promise<ApiReply> => {
    const res = await app.inject({
      method,
      url,
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    let parsed: unknown = res.body;
    try {
      parsed = res.json();
    } catch {
      // Not JSON: kept as text.
    }
    return { status: res.statusCode, body: parsed };
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}
