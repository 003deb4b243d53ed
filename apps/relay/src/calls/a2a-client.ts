import { setTimeout as sleep } from 'node:timers/promises';
import { AgentCard, type SendMessageRequest } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
  type RequestOptions,
} from '@a2a-js/sdk/client';
import { A2AError, isJsonRpcError } from '@a2a-js/sdk/errors';
import { Attempt, untilAborted } from './attempt.ts';
import { A2ARun } from './a2a-run.ts';
import { messageRequest } from './a2a-parts.ts';
import { checkedFetch, httpStatusErrorIn } from './checked-fetch.ts';
import type {
  CallOutcome,
  CallRequest,
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
import { networkFailure } from './net-errors.ts';
import { is2xx, probeGet } from './probes.ts';

/** Where an A2A server keeps its AgentCard, under its base URL. */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
/** Longest wait for the answer to a `CancelTask` sent when a call stops. */
export const CANCEL_TIMEOUT_MS = 2_000;
/** First and longest pause between `GetTask` polls of a task a blocking send left running. */
const POLL_MS = { first: 200, max: 2_000 } as const;
/** JSON-RPC's internal error: the only protocol error worth retrying. */
const JSON_RPC_INTERNAL_ERROR = -32603;

/** The card's URL for an endpoint's URL: the URL itself when it names a `.json` file. */
export function agentCardUrl(url: string): string {
  const path = URL.canParse(url) ? new URL(url).pathname : url;
  return /\.json$/i.test(path) ? url : url.replace(/\/+$/, '') + AGENT_CARD_PATH;
}

/** A connected SDK client and the card it was made from. */
interface Session {
  client: Client;
  card: AgentCard;
}

/** The failure an A2A protocol error (or anything else the SDK threw) stands for. */
function protocolFailure(err: unknown): CallFailure {
  let cause: unknown = err;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth += 1) {
    if (cause instanceof A2AError) {
      const internal = isJsonRpcError(cause) && cause.envelopeCode === JSON_RPC_INTERNAL_ERROR;
      return failed(CallCode.a2aError, clipText(cause.message), internal);
    }
    cause = cause.cause;
  }
  // Not an A2A error: a reply that broke the protocol, which another replica may not.
  return failed(CallCode.a2aError, clipText(errorMessage(err)), true);
}

/**
 * An A2A server (`protocol: a2a`), through the A2A SDK's client: the AgentCard is read from
 * `<url>/.well-known/agent-card.json` (A2A 1.0 or 0.3), and the SDK picks the card's JSON-RPC
 * or HTTP+JSON interface. The target's headers go with every request. Non-2xx replies map as an
 * HTTP endpoint's (`HTTP_<status>`); a refused connection is `ENDPOINT_UNREACHABLE`.
 */
export class A2AEndpointClient implements EndpointClient {
  readonly #target: EndpointTarget;
  readonly #resolver: DefaultAgentCardResolver;
  readonly #factory: ClientFactory;
  #session: Promise<Session> | undefined;

  constructor(target: EndpointTarget) {
    this.#target = target;
    // The card fetch is the one request the SDK sends without a signal: bound it too.
    const fetchImpl = checkedFetch(target.headers, {
      timeoutMs: target.timeoutMs,
      sameHostAs: target.url,
    });
    const legacyCompat = { enabled: true };
    this.#resolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat });
    this.#factory = new ClientFactory({
      transports: [
        new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
        new RestTransportFactory({ fetchImpl, legacyCompat }),
      ],
      cardResolver: this.#resolver,
    });
  }

  /**
   * Runs one attempt as an A2A message (`messageRequest`): streamed when the card says
   * `capabilities.streaming` (status updates → onProgress, artifact parts → onChunk), else a
   * blocking `SendMessage`, polled with `GetTask` if the server still returns a running task.
   * When the call stops (cancel, timeout, deadline, shutdown) and the A2A task's id is known, a
   * `CancelTask` is sent and answered (or {@link CANCEL_TIMEOUT_MS} passes) before it returns.
   */
  async call(req: CallRequest): Promise<CallOutcome> {
    const attempt = new Attempt(req, this.#target.timeoutMs);
    const run = new A2ARun(req);
    let session: Session | undefined;
    try {
      if (attempt.signal.aborted) return attempt.outcome();
      session = await untilAborted(this.#connect(), attempt.signal);
      const params = messageRequest(req);
      const options = { signal: attempt.signal };
      const outcome = session.card.capabilities?.streaming
        ? await this.#stream(session.client, params, run, options)
        : await this.#send(session.client, params, run, options);
      if (run.leftOpen) await this.#cancelRemote(session, run.taskId);
      return outcome;
    } catch (err) {
      if (attempt.signal.aborted) {
        await this.#cancelRemote(session, run.taskId);
        return attempt.outcome();
      }
      const status = httpStatusErrorIn(err);
      if (status) return httpStatusFailure(status.status, status.body, status.retryAfter);
      const network = networkFailure(err);
      if (network) {
        // The server may have moved or restarted: read its card again next time.
        this.#session = undefined;
        return network;
      }
      return protocolFailure(err);
    } finally {
      attempt.dispose();
    }
  }

  /**
   * Reads the AgentCard afresh: its skills' ids are the capabilities, and the card (in A2A 1.0
   * JSON) is returned. Later calls use the card read here. Throws when the card cannot be read.
   */
  async discover(): Promise<Discovery> {
    this.#session = undefined;
    const { card } = await this.#connect();
    return {
      capabilities: card.skills.map((skill) => ({ remoteName: skill.id })),
      card: AgentCard.toJSON(card) as Record<string, unknown>,
    };
  }

  /** GET of the health URL (2xx = alive) when one is declared, else of the AgentCard (200). */
  async probe(signal: AbortSignal): Promise<boolean> {
    const { healthUrl, headers, url } = this.#target;
    if (healthUrl) return probeGet(healthUrl, headers, signal, is2xx);
    return probeGet(agentCardUrl(url), headers, signal, (status) => status === 200);
  }

  /** Forgets the card and the SDK client (it holds no connection of its own). */
  async close(): Promise<void> {
    this.#session = undefined;
  }

  /** The session, reading the card on first use, after a failure to, and on each discovery. */
  #connect(): Promise<Session> {
    if (!this.#session) {
      const opening = this.#resolver
        .resolve(agentCardUrl(this.#target.url), '')
        .then(async (card) => ({ client: await this.#factory.createFromAgentCard(card), card }));
      this.#session = opening;
      opening.catch(() => {
        if (this.#session === opening) this.#session = undefined;
      });
    }
    return this.#session;
  }

  async #stream(
    client: Client,
    params: SendMessageRequest,
    run: A2ARun,
    options: RequestOptions,
  ): Promise<CallOutcome> {
    for await (const event of client.sendMessageStream(params, options)) {
      const outcome = run.onEvent(event);
      if (outcome) return outcome;
    }
    return failed(CallCode.endpointError, 'the A2A stream ended before the task did', true);
  }

  async #send(
    client: Client,
    params: SendMessageRequest,
    run: A2ARun,
    options: RequestOptions & { signal: AbortSignal },
  ): Promise<CallOutcome> {
    const reply = await client.sendMessage(params, options);
    if ('messageId' in reply) return run.onMessage(reply);
    let outcome = run.onTask(reply);
    // A blocking send should return a finished task; a server that returns it running is polled.
    for (
      let pauseMs: number = POLL_MS.first;
      !outcome;
      pauseMs = Math.min(pauseMs * 2, POLL_MS.max)
    ) {
      await sleep(pauseMs, undefined, { signal: options.signal });
      outcome = run.onTask(await client.getTask({ tenant: '', id: reply.id }, options));
    }
    return outcome;
  }

  /** Asks the server to cancel the A2A task, when there is one; its answer is not needed. */
  async #cancelRemote(session: Session | undefined, taskId: string | undefined): Promise<void> {
    if (!session || !taskId) return;
    try {
      await session.client.cancelTask(
        { tenant: '', id: taskId, metadata: undefined },
        { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) },
      );
    } catch {
      // The task may have ended meanwhile, or the server be gone: nothing more to do.
    }
  }
}
