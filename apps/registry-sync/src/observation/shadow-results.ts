import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  MAX_SHADOW_RESULT_BYTES,
  type ReachKeys,
  type ShadowRecord,
  type TaskAckMessage,
} from '@agent-reach/protocol';

/** How many and how long shadow results are kept per observing agent. */
export interface ShadowKeeping {
  /** Newest records kept (`REACH_SHADOW_KEEP`). */
  shadowKeep: number;
  /** Kept this long after the latest one (`REACH_SHADOW_RETENTION_MS`). */
  shadowRetentionMs: number;
}

/** The record of a shadow copy's completion or failure (results cut at MAX_SHADOW_RESULT_BYTES). */
export function shadowRecordOf(ack: TaskAckMessage, capability: string, at: number): ShadowRecord {
  const record: ShadowRecord = {
    task_id: ack.task_id,
    capability,
    ok: ack.stage === 'completed',
    at,
  };
  if (ack.duration_ms !== undefined) record.duration_ms = ack.duration_ms;
  if (ack.stage === 'completed' && ack.result !== undefined) {
    if (Buffer.byteLength(ack.result) > MAX_SHADOW_RESULT_BYTES) {
      record.result = ack.result.slice(0, MAX_SHADOW_RESULT_BYTES);
      record.truncated = true;
    } else record.result = ack.result;
  }
  if (ack.stage === 'failed' && ack.error_code) record.error_code = ack.error_code;
  return record;
}

/**
 * Keeps observing agents' shadow results apart from every task's state: a list per agent
 * (`keys.observations`), newest first, capped at `shadowKeep` and expiring `shadowRetentionMs`
 * after the latest. Nothing here reaches a caller, a callback topic or the task's own record.
 */
export class ShadowResults {
  constructor(
    private readonly o: {
      redis: RedisClient;
      keys: ReachKeys;
      settings: ShadowKeeping;
    },
  ) {}

  /** Keeps one shadow copy's outcome with its observing agent. */
  async keep(agentId: string, record: ShadowRecord): Promise<void> {
    const key = this.o.keys.observations(agentId);
    const { shadowKeep, shadowRetentionMs } = this.o.settings;
    await this.o.redis
      .multi()
      .lpush(key, JSON.stringify(record))
      .ltrim(key, 0, shadowKeep - 1)
      .pexpire(key, shadowRetentionMs)
      .exec();
  }

  /** The agent's shadow records, newest first (unreadable entries skipped). */
  async list(agentId: string): Promise<ShadowRecord[]> {
    const raw = await this.o.redis.lrange(this.o.keys.observations(agentId), 0, -1);
    const out: ShadowRecord[] = [];
    for (const text of raw) {
      try {
        const r = JSON.parse(text) as ShadowRecord;
        if (typeof r.task_id === 'string' && typeof r.ok === 'boolean') out.push(r);
      } catch {
        // A record this version cannot read is left out of the report.
      }
    }
    return out;
  }
}
