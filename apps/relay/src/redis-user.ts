import type { RedisCredentials } from '@agent-reach/protocol';
import { isCluster, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';

/** A refusal that says the connection's Redis user or password is gone (a Redis restart). */
const CREDENTIALS_GONE = /WRONGPASS|NOAUTH|invalid username-password/i;

/** True for an error that says the relay's Redis user must be issued again. */
export function isCredentialError(err: unknown): boolean {
  return err instanceof Error && CREDENTIALS_GONE.test(err.message);
}

/**
 * Sets the user and password a client authenticates with at its next (re)connection: a standalone
 * connection's options, or a Cluster's node options and each node connection's.
 */
export function applyCredentials(client: RedisClient, c: RedisCredentials): void {
  if (isCluster(client)) {
    const cluster = client;
    cluster.options.redisOptions = {
      ...cluster.options.redisOptions,
      username: c.username,
      password: c.password,
    };
    for (const node of cluster.nodes('all')) applyCredentials(node, c);
    return;
  }
  const redis = client;
  redis.options.username = c.username;
  redis.options.password = c.password;
}

/** What the renewal needs. */
export interface RedisUserOptions {
  /** Asks registry-sync for a new user (`POST /v1/relays/:relay_id/redis`). */
  issue(): Promise<RedisCredentials>;
  /** Every client the relay authenticates with the user. */
  clients(): RedisClient[];
  logger: Logger;
}

/**
 * The relay's Redis user from registry-sync (REACH_RELAY_REDIS_ACL=on). Users live in the Redis
 * server, not its data: after a Redis restart the user is gone and reconnections are refused, so a
 * refused authentication asks registry-sync for the user again and the clients reconnect with it.
 */
export class RedisUser {
  #renewing: Promise<void> | undefined;

  constructor(private readonly o: RedisUserOptions) {}

  /** Called with every client error: renews the user once when it is gone. */
  onError(err: unknown): void {
    if (!isCredentialError(err) || this.#renewing) return;
    this.#renewing = this.#renew().finally(() => {
      this.#renewing = undefined;
    });
  }

  async #renew(): Promise<void> {
    try {
      const c = await this.o.issue();
      for (const client of this.o.clients()) applyCredentials(client, c);
      this.o.logger.info({ username: c.username }, 'redis user issued again');
    } catch (err) {
      this.o.logger.warn({ err }, 'asking registry-sync for the redis user again failed');
    }
  }
}
