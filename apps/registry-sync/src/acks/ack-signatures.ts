import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  AgentRecordField as F,
  ackSignatureOf,
  ackSignatureValid,
  type AckMessage,
  type ReachKeys,
} from '@agent-reach/protocol';

/** An agent's ack keys as last read from its record. */
interface AgentAckKeys {
  epoch: number;
  key: string;
  /** The fenced instance's, for its acks written before it was fenced. */
  prevEpoch: number;
  prevKey: string;
  fetchedAt: number;
}

/** A failed check with the key in hand reads the record again at most this often per agent. */
const REFETCH_MS = 1000;

/** What a {@link AckSignatures} reads with. */
export interface AckSignaturesOptions {
  redis: RedisClient;
  keys: ReachKeys;
}

/**
 * Checks the signatures of acks (required with REACH_AGENT_ACL=on): HMAC-SHA256 of the entry
 * under the ack key of the instance that wrote it (`signAck`, docs/PROTOCOL.md §4). Keys come from
 * the agent records and are kept in memory per agent; an ack of an epoch not in hand reads the
 * record again (one HMGET, shared by the acks that wait for it), as does a failed check once a
 * second (the same instance registered afresh after a Redis restart). An entry without a valid
 * signature is refused: whoever holds only some agent's Redis credentials cannot sign for another.
 */
export class AckSignatures {
  private readonly cache = new Map<string, AgentAckKeys>();
  private readonly fetching = new Map<string, Promise<AgentAckKeys | undefined>>();

  constructor(private readonly o: AckSignaturesOptions) {}

  /** True when `fields` (the ack's entry) carry a valid signature of `ack`'s agent and epoch. */
  async verify(ack: AckMessage, fields: readonly string[]): Promise<boolean> {
    if (ackSignatureOf(fields) === undefined) return false;
    const held = this.cache.get(ack.agent_id);
    if (held) {
      const key = keyFor(held, ack.epoch);
      if (key !== undefined) {
        if (ackSignatureValid(fields, key)) return true;
        if (Date.now() - held.fetchedAt < REFETCH_MS) return false;
      }
    }
    const fresh = await this.fetch(ack.agent_id);
    const key = fresh && keyFor(fresh, ack.epoch);
    return key !== undefined && ackSignatureValid(fields, key);
  }

  private fetch(agentId: string): Promise<AgentAckKeys | undefined> {
    let pending = this.fetching.get(agentId);
    if (!pending) {
      pending = this.read(agentId).finally(() => this.fetching.delete(agentId));
      this.fetching.set(agentId, pending);
    }
    return pending;
  }

  private async read(agentId: string): Promise<AgentAckKeys | undefined> {
    const [epoch, key, prevEpoch, prevKey] = await this.o.redis.hmget(
      this.o.keys.agent(agentId),
      F.epoch,
      F.ackKey,
      F.ackEpochPrev,
      F.ackKeyPrev,
    );
    if (!key || !epoch) {
      this.cache.delete(agentId);
      return undefined;
    }
    const keys: AgentAckKeys = {
      epoch: Number(epoch),
      key,
      prevEpoch: Number(prevEpoch ?? 0),
      prevKey: prevKey ?? '',
      fetchedAt: Date.now(),
    };
    this.cache.set(agentId, keys);
    return keys;
  }
}

function keyFor(keys: AgentAckKeys, epoch: number): string | undefined {
  if (epoch === keys.epoch) return keys.key;
  if (epoch === keys.prevEpoch && keys.prevKey !== '') return keys.prevKey;
  return undefined;
}
