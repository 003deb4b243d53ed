import type { ErrorCode, RegisterReply, RegisterRequest } from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { isReachHttpError } from '../errors.ts';
import { Backoff } from '../util/backoff.ts';
import { sleep } from '../util/sleep.ts';
import type { CompiledAgentOptions } from './options.ts';
import type { RegistryClient } from './registry-client.ts';

/** Codes after which a retry is still worth it (the server is fine, the state is not yet). */
const RETRY_CODES: readonly ErrorCode[] = ['STORE_UNAVAILABLE', 'INTERNAL'];

/**
 * True when registering again can succeed: no answer at all, a 5xx, 408 or 429. Any other 4xx
 * means our request is wrong (bad options, refused), and repeating it forever would only hide that.
 */
export function isTransientRegisterError(err: unknown): boolean {
  if (!isReachHttpError(err)) return true;
  if (err.status >= 500 || err.status === 408 || err.status === 429) return true;
  return (RETRY_CODES as readonly string[]).includes(err.code);
}

/**
 * The register body for these options. `ready` is sent only when false (a two-phase start not
 * yet done): the registry takes a missing one as true, and older registries know no such field.
 */
export function registerBody(options: CompiledAgentOptions, ready: boolean): RegisterRequest {
  const body: RegisterRequest = {
    agent_id: options.agentId,
    instance_id: options.instanceId,
    max_concurrency: options.maxConcurrency,
    channel: options.channel,
  };
  // With a card by URL alone, the registry learns the capabilities from the card it fetches.
  if (options.capabilities.length > 0) body.capabilities = [...options.capabilities];
  if (options.card !== undefined) body.card = options.card;
  if (options.cardUrl !== undefined) body.card_url = options.cardUrl;
  if (options.region !== undefined) body.region = options.region;
  if (options.tags.length > 0) body.tags = [...options.tags];
  if (options.meta !== undefined) body.meta = options.meta;
  if (options.inputSchemas !== undefined) body.input_schemas = options.inputSchemas;
  if (options.shared) body.shared = true;
  if (options.observe) body.observe = true;
  if (!ready) body.ready = false;
  return body;
}

/** A successful registration and the readiness it told the registry. */
export interface Registration {
  reply: RegisterReply;
  ready: boolean;
}

/**
 * Registers, retrying with backoff until it succeeds, `signal` aborts (→ undefined), or the
 * registry refuses the request for good (→ rejects with the {@link ReachHttpError}).
 * The same instance_id is sent every time, so a re-registration is an upsert, never a takeover.
 * Each attempt sends the agent's readiness at that moment (`isReady`), so a re-registration
 * keeps it.
 */
export async function registerWithRetry(
  options: CompiledAgentOptions,
  registry: RegistryClient,
  logger: Logger,
  signal: AbortSignal,
  isReady: () => boolean,
): Promise<Registration | undefined> {
  const backoff = new Backoff(options.registerRetry);
  while (!signal.aborted) {
    const ready = isReady();
    try {
      const reply = await registry.register(registerBody(options, ready), signal);
      logger.info(
        {
          epoch: reply.epoch,
          stream: reply.stream,
          pools: reply.pools,
          heartbeatIntervalMs: reply.heartbeat_interval_ms,
          attempts: backoff.failures + 1,
          ready,
        },
        'registered',
      );
      return { reply, ready };
    } catch (err: unknown) {
      if (signal.aborted) break;
      if (!isTransientRegisterError(err)) {
        logger.error({ err }, 'registry refused the registration; not retrying');
        throw err;
      }
      const delayMs = backoff.next();
      logger.warn({ err, delayMs, failures: backoff.failures }, 'registration failed; retrying');
      await sleep(delayMs, signal);
    }
  }
  return undefined;
}
