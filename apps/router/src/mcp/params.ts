import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type JSONRPCErrorResponse,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';

/** What of a zod schema the check uses: its verdict, and where and why a value fails it. */
interface RequestSchema {
  safeParse(
    value: unknown,
  ):
    | { success: true }
    | { success: false; error: { issues: readonly { path: PropertyKey[]; message: string }[] } };
}

/**
 * The requests the router's MCP server answers, each with the SDK's schema of it. The SDK checks
 * a request against the same schema, but a failure there escapes its handler as a plain error
 * and is answered -32603 (internal error): checked here first, it is the client's -32602.
 * A method not listed is left to the SDK (-32601 when nothing serves it).
 */
const REQUEST_SCHEMAS: ReadonlyMap<string, RequestSchema> = new Map<string, RequestSchema>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/templates/list', ListResourceTemplatesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
]);

/** The methods whose params are checked before the SDK sees them. */
export const CHECKED_METHODS: readonly string[] = [...REQUEST_SCHEMAS.keys()];

/** Most issues named in one answer: a value wrong everywhere needs no answer of its size. */
const MAX_ISSUES = 5;

/**
 * Why a request's params are not what its method takes, or `undefined` when they are (or the
 * method is not one {@link CHECKED_METHODS} lists). `resources/read` also needs a URI that
 * parses: the SDK's `new URL()` of it would otherwise throw past its handler.
 */
export function invalidParams(request: JSONRPCRequest): string | undefined {
  const schema = REQUEST_SCHEMAS.get(request.method);
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(request);
  if (!parsed.success) {
    const { issues } = parsed.error;
    const named = issues.slice(0, MAX_ISSUES).map((issue) => {
      const at = issue.path.map(String).join('.');
      return at === '' ? issue.message : `${at}: ${issue.message}`;
    });
    const more = issues.length > MAX_ISSUES ? ` (and ${issues.length - MAX_ISSUES} more)` : '';
    return `invalid params of ${request.method}: ${named.join('; ')}${more}`;
  }
  if (request.method === 'resources/read') {
    const uri = (request.params as { uri: string }).uri;
    if (!URL.canParse(uri)) return 'invalid params of resources/read: params.uri is not a URI';
  }
  return undefined;
}

/** The -32602 answer of a request with invalid params. */
export function invalidParamsAnswer(id: JSONRPCRequest['id'], why: string): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: why } };
}

/**
 * Makes a connected transport answer a request whose params its method does not take with
 * -32602 itself, before the server it is connected to sees it. Call after `server.connect`,
 * which sets the `onmessage` this wraps.
 */
export function refuseInvalidParams(
  transport: Transport,
  onSendError: (err: unknown) => void,
): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const why = invalidParams(message);
      if (why !== undefined) {
        transport.send(invalidParamsAnswer(message.id, why)).catch(onSendError);
        return;
      }
    }
    deliver?.(message, extra);
  };
}
