import type { RedisClient } from '@agent-reach/service-kit/redis';
import { decodeEndpointRecord, type EndpointRecord, type ReachKeys } from '@agent-reach/protocol';
import { endpointSetScript } from './commands/endpoint-set.ts';
import type { StoredDeclaration } from './endpoint-record.ts';

/** A stored declaration as read: its record, and the exact text a change must still find. */
export interface ReadDeclaration {
  record: EndpointRecord;
  /** The stored JSON, for endpoint-set-2.lua's compare and set. */
  text: string;
}

/** What the endpoint store needs. */
export interface EndpointStoreOptions {
  redis: RedisClient;
  keys: ReachKeys;
}

/**
 * The declarations of endpoint agents in Redis (`keys.endpoints()`, agent_id → `EndpointRecord`
 * JSON; secrets apart in `keys.endpointSecrets()`), which relays read as they are. Every change
 * is a compare and set (endpoint-set-2.lua) and is announced on `keys.endpointsChannel()` with
 * the agent_id, so relays pick it up at once.
 */
export class EndpointStore {
  constructor(private readonly o: EndpointStoreOptions) {}

  /** One declaration, or undefined (none, or text that is not a record). */
  async read(agentId: string): Promise<ReadDeclaration | undefined> {
    const text = await this.o.redis.hget(this.o.keys.endpoints(), agentId);
    const record = decodeEndpointRecord(text);
    return record && text !== null ? { record, text } : undefined;
  }

  /** Every declaration, by agent_id. */
  async list(): Promise<ReadDeclaration[]> {
    const all = await this.o.redis.hgetall(this.o.keys.endpoints());
    const out: ReadDeclaration[] = [];
    for (const id of Object.keys(all).sort()) {
      const text = all[id] as string;
      const record = decodeEndpointRecord(text);
      if (record) out.push({ record, text });
    }
    return out;
  }

  /** Every declaration's secrets JSON, by agent_id (for the endpoints file's comparison only). */
  async secretTexts(): Promise<Record<string, string>> {
    return this.o.redis.hgetall(this.o.keys.endpointSecrets());
  }

  /**
   * Writes `next` (undefined: removes the declaration and its secrets) if the stored one is
   * still `expected` (undefined: none). False when it changed meanwhile: read again and retry.
   */
  async swap(
    agentId: string,
    expected: ReadDeclaration | undefined,
    next: StoredDeclaration | undefined,
  ): Promise<boolean> {
    const { redis, keys } = this.o;
    const written = await endpointSetScript.run(redis, {
      keys: { records: keys.endpoints(), secrets: keys.endpointSecrets() },
      args: {
        agentId,
        expected: expected?.text ?? '',
        record: next ? JSON.stringify(next.record) : '',
        secrets: next?.secrets ? JSON.stringify(next.secrets) : '',
      },
    });
    if (written) await redis.publish(keys.endpointsChannel(), agentId);
    return written;
  }
}
