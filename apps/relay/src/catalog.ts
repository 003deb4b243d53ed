import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  decodeEndpointRecord,
  type EndpointRecord,
  type EndpointSecrets,
  type ReachKeys,
} from '@agent-reach/protocol';
import type { Logger } from 'pino';

/** A declaration with its secrets, as the relay serves it. */
export interface CatalogEntry {
  record: EndpointRecord;
  secrets: EndpointSecrets;
}

/** What the catalog needs. */
export interface CatalogOptions {
  redis: RedisClient;
  keys: ReachKeys;
  logger: Logger;
}

/**
 * Every endpoint declaration, read straight from Redis (`keys.endpoints()` and
 * `keys.endpointSecrets()`, written by registry-sync). Read whole: one hash of records, at most a
 * few thousand entries.
 */
export class EndpointCatalog {
  #entries = new Map<string, CatalogEntry>();

  constructor(private readonly o: CatalogOptions) {}

  get entries(): ReadonlyMap<string, CatalogEntry> {
    return this.#entries;
  }

  /** Reads every declaration again. */
  async load(): Promise<void> {
    const { redis, keys, logger } = this.o;
    const recordsKey = keys.endpoints();
    const secretsKey = keys.endpointSecrets();
    const [records, secrets] = await Promise.all([
      redis.hgetall(recordsKey),
      redis.hgetall(secretsKey),
    ]);
    const next = new Map<string, CatalogEntry>();
    for (const [agentId, text] of Object.entries(records)) {
      const record = decodeEndpointRecord(text);
      if (!record || record.agent_id !== agentId) {
        logger.warn({ agent_id: agentId }, 'endpoint declaration not readable; skipped');
        continue;
      }
      next.set(agentId, { record, secrets: parseSecrets(secrets[agentId]) });
    }
    this.#entries = next;
  }
}

function parseSecrets(text: string | undefined): EndpointSecrets {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as EndpointSecrets;
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
}
