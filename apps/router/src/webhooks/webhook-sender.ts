import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { WebhookField, type ReachKeys } from '@agent-reach/protocol';
import { checkOutboundUrl, type OutboundHosts } from '@agent-reach/service-kit';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { nextDelayMs } from './webhook-body.ts';
import { webhookSettleScript, webhookTakeScript } from './webhook-scripts.ts';
import type { WebhookSecrets } from './webhook-secrets.ts';
import { signatureHeaders } from './signing.ts';

/** How a sender sends (read at each use: shared settings may change). */
export interface WebhookSendSettings {
  /** Waits before each try after the first (REACH_WEBHOOK_RETRY_SCHEDULE), ms. */
  webhookRetrySchedule: readonly number[];
  /** One try's time limit (REACH_WEBHOOK_TIMEOUT_MS). */
  webhookTimeoutMs: number;
  /** How long a given-up delivery is kept (REACH_WEBHOOK_FAILURE_RETENTION_S). */
  webhookFailureRetentionS: number;
}

/** What a sender works with. */
export interface WebhookSenderOptions {
  /** The router's shared connection, where the webhook scripts are loaded. */
  redis: RedisClient;
  keys: ReachKeys;
  secrets: WebhookSecrets;
  /** Where webhooks may go (REACH_WEBHOOK_HOSTS): checked again before each try. */
  allowed: OutboundHosts;
  settings: WebhookSendSettings;
  logger: Logger;
  /** `reach_router_webhooks_total{outcome}`: delivered, retried, failed. */
  counter?: Counter<'outcome'>;
  /**
   * The shortest wait between two looks at the due set when nothing more is due, ms: the loop
   * sleeps until the earliest delivery falls due, but never less than this. @default 200
   */
  idleMs?: number;
  /**
   * The longest such wait, ms: when nothing falls due sooner, how late a delivery that no nudge
   * announced (one another router made and could not take, having stopped) is seen. @default 2000
   */
  maxIdleMs?: number;
}

/** Tries under way at once per router. */
const MAX_IN_FLIGHT = 64;
/** How long a delivered delivery's hash is kept: an item handled again finds it and sends nothing. */
const DELIVERED_KEEP_S = 24 * 3600;

/** One try's outcome. */
type TryOutcome =
  { ok: true; status: number } | { ok: false; status: number; error: string; final?: boolean };

/**
 * Sends webhook deliveries. Every router runs one; they share the due set (`keys.webhookDue`),
 * taking what is due under a lease (webhook-take-1.lua) so a delivery is tried by one router at a
 * time, and recording each try's outcome (webhook-settle-4.lua): delivered, due again after the
 * retry schedule's next wait, or given up (listed in the failure sets). The schedule's state is in
 * Redis; a router that dies mid-try leaves its lease to run out, and another tries again with the
 * same `webhook-id`. Redirects are not followed and the URL is checked against the allowed hosts
 * before each try.
 */
export class WebhookSender {
  readonly #stop = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #idleMs: number;
  readonly #maxIdleMs: number;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  /** A nudge came while the loop was not asleep: its next sleep is skipped. */
  #nudged = false;

  constructor(private readonly o: WebhookSenderOptions) {
    this.#idleMs = o.idleMs ?? 200;
    this.#maxIdleMs = Math.max(this.#idleMs, o.maxIdleMs ?? 2000);
  }

  /** Starts the loop (once). */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Looks for due deliveries at once (a forwarder just made some, or one was re-sent). */
  nudge(): void {
    if (this.#wake) this.#wake();
    else this.#nudged = true;
  }

  /** Ends the loop; tries under way are abandoned, their leases left to run out. */
  async close(): Promise<void> {
    this.#stop.abort();
    this.#wake?.();
    await this.#loop;
    await Promise.all(this.#inFlight);
  }

  /** The lease of a try: its time limit twice, and a second. */
  #leaseMs(): number {
    return this.o.settings.webhookTimeoutMs * 2 + 1000;
  }

  async #run(): Promise<void> {
    const stopped = this.#stop.signal;
    while (!stopped.aborted) {
      try {
        while (this.#inFlight.size >= MAX_IN_FLIGHT && !stopped.aborted)
          await Promise.race(this.#inFlight);
        const room = MAX_IN_FLIGHT - this.#inFlight.size;
        const leaseMs = this.#leaseMs();
        this.#nudged = false;
        const { now, next, ids } = await webhookTakeScript.run(this.o.redis, {
          keys: { due: this.o.keys.webhookDue() },
          args: { leaseMs, count: room },
        });
        for (const id of ids) {
          const done: Promise<void> = this.#send(id, now + leaseMs).finally(() =>
            this.#inFlight.delete(done),
          );
          this.#inFlight.add(done);
        }
        // Nothing more due: asleep until the earliest delivery falls due (a retry, a lease
        // running out), or a nudge.
        if (ids.length < room) await this.#idle(next < 0 ? this.#maxIdleMs : next - now);
      } catch (err: unknown) {
        if (stopped.aborted) return;
        this.o.logger.warn({ err }, 'webhook take failed; retrying');
        await this.#idle(this.#idleMs);
      }
    }
  }

  /** Waits `ms`, held between the shortest and the longest wait, or until a nudge. */
  #idle(ms: number): Promise<void> {
    if (this.#nudged) return Promise.resolve();
    const waitMs = Math.min(this.#maxIdleMs, Math.max(this.#idleMs, ms));
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, waitMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    }).finally(() => (this.#wake = undefined));
  }

  /** One try of delivery `id`, held until `lease`; then its outcome recorded. */
  async #send(id: string, lease: number): Promise<void> {
    const { redis, keys, settings } = this.o;
    const log = this.o.logger.child({ webhook_id: id });
    try {
      const d = await redis.hgetall(keys.webhook(id));
      const tenant = d[WebhookField.tenant];
      const body = d[WebhookField.body];
      const url = d[WebhookField.url];
      if (!tenant || body === undefined || !url || d[WebhookField.status] !== 'pending') {
        await this.#settle(id, lease, tenant, 'drop', 0, '', 0);
        return;
      }
      const tries = Number(d[WebhookField.tries]) || 0;
      const outcome = await this.#try(id, url, tenant, body);
      if (this.#stop.signal.aborted) return;
      if (outcome.ok) {
        await this.#settle(id, lease, tenant, 'delivered', 0, '', outcome.status);
        this.o.counter?.inc({ outcome: 'delivered' });
        return;
      }
      const delay = outcome.final ? undefined : nextDelayMs(settings.webhookRetrySchedule, tries);
      if (delay === undefined) {
        log.warn(
          { status: outcome.status, error: outcome.error, tries: tries + 1 },
          'webhook given up',
        );
        await this.#settle(id, lease, tenant, 'failed', 0, outcome.error, outcome.status);
        this.o.counter?.inc({ outcome: 'failed' });
      } else {
        log.debug(
          { status: outcome.status, error: outcome.error, delay_ms: delay },
          'webhook try failed',
        );
        await this.#settle(id, lease, tenant, 'retry', delay, outcome.error, outcome.status);
        this.o.counter?.inc({ outcome: 'retried' });
        // Its next try may fall due before the loop's next look.
        this.nudge();
      }
    } catch (err: unknown) {
      // Its lease runs out and it is tried again.
      if (!this.#stop.signal.aborted) log.warn({ err }, 'webhook try not recorded');
    }
  }

  async #settle(
    id: string,
    lease: number,
    tenant: string | undefined,
    outcome: 'delivered' | 'retry' | 'failed' | 'drop',
    delayMs: number,
    error: string,
    httpStatus: number,
  ): Promise<void> {
    const { keys, settings } = this.o;
    await webhookSettleScript.run(this.o.redis, {
      keys: {
        due: keys.webhookDue(),
        delivery: keys.webhook(id),
        failed: keys.webhookFailed(),
        tenantFailed: keys.webhookFailed(tenant || 'default'),
      },
      args: {
        id,
        lease,
        outcome,
        delayMs,
        httpStatus,
        error: error.slice(0, 500),
        keepS: DELIVERED_KEEP_S,
        failedTtlS: settings.webhookFailureRetentionS,
      },
    });
  }

  /** POSTs the body, signed; 2xx is delivered, anything else (a redirect too) a failed try. */
  async #try(id: string, url: string, tenant: string, body: string): Promise<TryOutcome> {
    const checked = checkOutboundUrl(url, this.o.allowed);
    if (!('url' in checked))
      return { ok: false, status: 0, error: 'the URL is no longer allowed', final: true };
    const secrets = await this.o.secrets.signing(tenant);
    if (secrets.length === 0)
      return { ok: false, status: 0, error: `tenant ${tenant} has no webhook secret` };
    const headers = {
      'content-type': 'application/json',
      ...signatureHeaders(id, Math.floor(Date.now() / 1000), body, secrets),
    };
    try {
      const res = await fetch(checked.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.any([
          this.#stop.signal,
          AbortSignal.timeout(this.o.settings.webhookTimeoutMs),
        ]),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
      // 410 Gone: the receiver says it wants no more.
      return {
        ok: false,
        status: res.status,
        error: `HTTP ${res.status}`,
        final: res.status === 410,
      };
    } catch (err: unknown) {
      return { ok: false, status: 0, error: (err as Error).message || 'request failed' };
    }
  }
}
