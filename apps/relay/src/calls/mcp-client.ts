import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { Attempt, untilAborted } from './attempt.ts';
import { checkedFetch, httpStatusErrorIn } from './checked-fetch.ts';
import type {
  CallOutcome,
  CallRequest,
  DiscoveredCapability,
  Discovery,
  EndpointClient,
  EndpointTarget,
} from './endpoint-client.ts';
import {
  CallCode,
  clipText,
  errorMessage,
  failed,
  httpStatusFailure,
  type CallFailure,
} from './failures.ts';
import { toolArguments, toolOutcome } from './mcp-results.ts';
import { networkFailure } from './net-errors.ts';
import { is2xx, PROBE_GET_TIMEOUT_MS, probeGet } from './probes.ts';

/** How the relay introduces itself in `initialize`. */
const CLIENT_INFO = { name: 'agent-reach-relay', version: '1.0.0' };
/** Longest wait for a session's DELETE when the client closes. */
const TERMINATE_TIMEOUT_MS = 1_000;
/** Most pages of `tools/list` read in one discovery. */
const MAX_TOOL_PAGES = 100;

/** The SDK's reports of a response stream lost for good (streamableHttp.js). */
const STREAM_LOST = /^(SSE stream disconnected|Maximum reconnection attempts|Failed to reconnect)/;

/** One MCP session: the SDK client and its transport. */
interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

/** True when `err` says the server no longer knows the session (404, MCP Streamable HTTP). */
function sessionLost(err: unknown): boolean {
  return (
    httpStatusErrorIn(err)?.status === 404 ||
    (err instanceof StreamableHTTPError && err.code === 404)
  );
}

/** True when `err` says the session cannot be used again (a connection error, a lost session). */
function sessionBroken(err: unknown): boolean {
  return (
    sessionLost(err) ||
    socketError(err) ||
    (err instanceof McpError && err.code === (ErrorCode.ConnectionClosed as number))
  );
}

const socketError = (err: unknown): boolean => networkFailure(err) !== undefined;

/** Every tool a server lists, over all pages (at most {@link MAX_TOOL_PAGES}). */
async function listTools(client: Client): Promise<DiscoveredCapability[]> {
  const tools: DiscoveredCapability[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
    const listed = await client.listTools(cursor === undefined ? undefined : { cursor });
    for (const tool of listed.tools)
      tools.push({ remoteName: tool.name, inputSchema: tool.inputSchema });
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/**
 * An MCP server over Streamable HTTP (`protocol: mcp`), through the MCP SDK's client: one session
 * per endpoint, opened on first use and again after it broke (a 404 for its session id, a
 * refused or reset connection). The target's headers go with every request.
 *
 * A call's timeout is the MCP SDK's: `timeoutMs` since the call or its last progress
 * notification, so a tool that reports progress may run longer than `timeoutMs`; the task's
 * deadline still bounds it.
 */
export class McpEndpointClient implements EndpointClient {
  readonly #target: EndpointTarget;
  #session: Promise<Session> | undefined;
  /** What {@link #session} resolved to, once it did. */
  #opened: Session | undefined;

  constructor(target: EndpointTarget) {
    this.#target = target;
  }

  /**
   * Calls the tool `remoteName` with the payload as its arguments (`toolArguments`), progress
   * notifications going to onProgress; the SDK sends `notifications/cancelled` when the call
   * stops. The reply maps by `toolOutcome`; a JSON-RPC error is `MCP_ERROR` (retryable only for
   * an internal error). A call that finds its session lost runs once more on a new one (the
   * server refused it unseen).
   */
  async call(req: CallRequest): Promise<CallOutcome> {
    const attempt = new Attempt(req, undefined);
    try {
      if (attempt.signal.aborted) return attempt.outcome();
      return await this.#callTool(req, attempt, true);
    } catch (err) {
      return attempt.signal.aborted ? attempt.outcome() : this.#failure(err);
    } finally {
      attempt.dispose();
    }
  }

  /**
   * Lists the server's tools (every page): each tool's name, with its input schema. A session the
   * server lost is replaced once. Throws when the server cannot be asked.
   */
  async discover(): Promise<Discovery> {
    const session = await this.#connect();
    try {
      return { capabilities: await listTools(session.client) };
    } catch (err) {
      if (!sessionBroken(err)) throw err;
      this.#drop(session);
      if (!sessionLost(err)) throw err;
      return { capabilities: await listTools((await this.#connect()).client) };
    }
  }

  /** GET of the health URL (2xx = alive) when one is declared, else an MCP `ping`. */
  async probe(signal: AbortSignal): Promise<boolean> {
    const { healthUrl, headers } = this.#target;
    if (healthUrl) return probeGet(healthUrl, headers, signal, is2xx);
    let session: Session | undefined;
    // The SDK keeps its listener on a request's signal: give it one that ends with the probe.
    const own = AbortSignal.any([signal, AbortSignal.timeout(PROBE_GET_TIMEOUT_MS)]);
    try {
      session = await untilAborted(this.#connect(), own);
      await session.client.ping({ signal: own, timeout: PROBE_GET_TIMEOUT_MS });
      return true;
    } catch (err) {
      if (session && sessionBroken(err)) this.#drop(session);
      return false;
    }
  }

  /** Ends the session (a DELETE, as the transport asks of a client that leaves) and closes it. */
  async close(): Promise<void> {
    const opening = this.#session;
    this.#session = undefined;
    this.#opened = undefined;
    const session = await opening?.catch(() => undefined);
    if (!session) return;
    const timeout = AbortSignal.timeout(TERMINATE_TIMEOUT_MS);
    await untilAborted(session.transport.terminateSession(), timeout).catch(() => undefined);
    await session.client.close().catch(() => undefined);
  }

  async #callTool(req: CallRequest, attempt: Attempt, mayRetry: boolean): Promise<CallOutcome> {
    const session = await untilAborted(this.#connect(), attempt.signal);
    try {
      const reply = await session.client.callTool(
        { name: req.remoteName, arguments: toolArguments(req.payload) },
        undefined,
        {
          signal: attempt.signal,
          timeout: this.#target.timeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: (progress) => req.onProgress(progress),
        },
      );
      return toolOutcome(reply);
    } catch (err) {
      if (attempt.signal.aborted || !sessionBroken(err)) throw err;
      this.#drop(session);
      if (mayRetry && sessionLost(err)) return this.#callTool(req, attempt, false);
      throw err;
    }
  }

  #failure(err: unknown): CallFailure {
    const status = httpStatusErrorIn(err);
    if (status) return httpStatusFailure(status.status, status.body, status.retryAfter);
    const network = networkFailure(err);
    if (network) return network;
    if (err instanceof StreamableHTTPError && err.code !== undefined)
      return httpStatusFailure(err.code, err.message, null);
    if (err instanceof McpError) {
      if (err.code === (ErrorCode.RequestTimeout as number))
        return failed(
          CallCode.timeout,
          `no answer within ${this.#target.timeoutMs} ms of the call or its last progress`,
          true,
        );
      if (err.code === (ErrorCode.ConnectionClosed as number))
        return failed(CallCode.endpointError, clipText(err.message), true);
      const internal = err.code === (ErrorCode.InternalError as number);
      return failed(CallCode.mcpError, clipText(err.message), internal);
    }
    // A reply the SDK could not read (it broke the protocol): another replica may not.
    return failed(CallCode.mcpError, clipText(errorMessage(err)), true);
  }

  /** The session, opened on first use and after it broke. */
  #connect(): Promise<Session> {
    if (!this.#session) {
      const client = new Client(CLIENT_INFO);
      const transport = new StreamableHTTPClientTransport(new URL(this.#target.url), {
        // The SDK needs the statuses of its GETs and DELETEs; a POST's non-2xx maps as HTTP's.
        fetch: checkedFetch(this.#target.headers, {
          checks: (method) => method === 'POST',
          sameHostAs: this.#target.url,
        }),
      });
      const opening = client.connect(transport, { timeout: this.#target.timeoutMs }).then(() => {
        const session = { client, transport };
        if (this.#session === opening) this.#opened = session;
        return session;
      });
      this.#session = opening;
      // A response stream that breaks (the server killed) leaves its call waiting for the
      // timeout: the SDK resumes only a stream that sent an event id, and after its retries it
      // reports the loss here without failing the call. The session goes instead, which fails
      // its calls as ConnectionClosed, retryable on another replica.
      client.onerror = (err: Error) => {
        if (STREAM_LOST.test(err.message))
          void opening.then(
            (session) => this.#drop(session),
            () => undefined,
          );
      };
      client.onclose = () => {
        if (this.#session === opening) this.#session = this.#opened = undefined;
      };
      opening.catch(() => {
        if (this.#session === opening) this.#session = undefined;
        void client.close().catch(() => undefined);
      });
    }
    return this.#session;
  }

  /** Forgets a broken session and closes it. */
  #drop(session: Session): void {
    if (this.#opened === session) this.#session = this.#opened = undefined;
    void session.client.close().catch(() => undefined);
  }
}
