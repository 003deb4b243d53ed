/**
 * What a reply says, read from its body: the `{error: CODE}` of an HTTP error, and the answer
 * of a JSON-RPC reply — `result`, or the error's code (JSON-RPC errors come back in 200 replies,
 * so the status alone hides them), with the Agent-Reach code an A2A error carries in its
 * `ErrorInfo` metadata and the `{error}` of an MCP tool result marked `isError`.
 */

/** What one reply's body says. */
export interface ReplyReading {
  /** The `error` code of an HTTP error reply (`{error: CODE, message}`). */
  code?: string;
  /**
   * The JSON-RPC answer: `result`, the error's code (`-32602`), `tool:<CODE>` for an MCP tool
   * result marked `isError`, or `none` (no JSON-RPC message: a notification's empty 202).
   * A batch reads as its first error, or `result`.
   */
  rpc?: string;
  /**
   * The Agent-Reach code a JSON-RPC error carries, with its HTTP status when it says one
   * (`503 NO_AGENT`, from an A2A error's `data[0].metadata`).
   */
  reason?: string;
  /** The JSON-RPC error's message, cut: printed with a failure. */
  message?: string;
}

/** How much of a message is kept for printing. */
const MESSAGE_CHARS = 400;

/** Reads a reply body; `jsonrpc` when the request was a JSON-RPC call. */
export function readReply(body: Buffer, jsonrpc: boolean): ReplyReading {
  const text = body.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON, or cut short: a JSON-RPC answer is still told by its first bytes.
    return jsonrpc ? scan(text) : {};
  }
  const out: ReplyReading = {};
  if (isObject(parsed) && typeof parsed.error === 'string') out.code = parsed.error;
  // The API's own `{error, message}` (401, 400 INVALID_JSON, …) is no JSON-RPC answer.
  if (jsonrpc && out.code === undefined)
    Object.assign(out, text.trim() === '' ? { rpc: 'none' } : rpcOf(parsed));
  return out;
}

/**
 * Reads one server-sent event (its lines up to the blank line): the JSON-RPC answer of its
 * `data:` for a JSON-RPC stream, else the event's name (`sse:stage`).
 */
export function readEvent(block: string, jsonrpc: boolean): ReplyReading {
  const data = block
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trimStart())
    .join('\n');
  if (jsonrpc) return readReply(Buffer.from(data), true);
  const name = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
  return { rpc: `sse:${name}` };
}

function rpcOf(parsed: unknown): Omit<ReplyReading, 'code'> {
  if (Array.isArray(parsed)) {
    const all = parsed.map(rpcOf);
    return (
      all.find((r) => r.rpc === '-32603') ?? all.find((r) => r.rpc !== 'result') ?? all[0] ?? {}
    );
  }
  if (!isObject(parsed)) return { rpc: 'not-jsonrpc' };
  const error = parsed.error;
  if (isObject(error) && typeof error.code === 'number') {
    const out: ReplyReading = { rpc: String(error.code) };
    if (typeof error.message === 'string') out.message = error.message.slice(0, MESSAGE_CHARS);
    // A2A 1.0 carries the code in ErrorInfo metadata; A2A 0.3 errors only in the message.
    const reason = reasonOf(error.data) ?? leadingCode(error.message);
    if (reason) out.reason = reason;
    return out;
  }
  if ('result' in parsed) {
    const result = parsed.result;
    if (isObject(result) && result.isError === true) {
      const body = result.structuredContent;
      const code = isObject(body) && typeof body.error === 'string' ? body.error : 'uncoded';
      return { rpc: `tool:${code}`, reason: code };
    }
    return { rpc: 'result' };
  }
  return { rpc: 'not-jsonrpc' };
}

/** An A2A error's Agent-Reach code: `data[0].metadata` `{error, http_status}`. */
function reasonOf(data: unknown): string | undefined {
  const info: unknown = Array.isArray(data) ? data[0] : undefined;
  if (!isObject(info) || !isObject(info.metadata)) return undefined;
  const { error, http_status: status } = info.metadata;
  if (typeof error !== 'string') return undefined;
  return typeof status === 'string' ? `${status} ${error}` : error;
}

/** The `CODE` of a message written `CODE: what to fix` (the gateway's wording of API errors). */
function leadingCode(message: unknown): string | undefined {
  return typeof message === 'string' ? /^([A-Z][A-Z_]+): /.exec(message)?.[1] : undefined;
}

/** A JSON-RPC answer told from the start of a body that does not parse (cut, or huge). */
function scan(text: string): ReplyReading {
  const code = /"error"\s*:\s*\{\s*"code"\s*:\s*(-?\d+)/.exec(text)?.[1];
  if (code !== undefined) return { rpc: code };
  if (/"result"\s*:/.test(text)) return { rpc: 'result' };
  return { rpc: text.trim() === '' ? 'none' : 'not-jsonrpc' };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
