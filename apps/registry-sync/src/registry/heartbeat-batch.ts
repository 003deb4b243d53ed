import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import type { AgentStatus, BatchBeat, BatchBeatReply, ReachKeys } from '@agent-reach/protocol';
import { heartbeatScript } from '../commands/heartbeat.ts';
import { AgentListing } from './agent-listing.ts';
import { agentRefusal, heartbeatCall } from './heartbeats.ts';
import { parseToken } from './token.ts';

/** What a batch of heartbeats needs. */
export interface HeartbeatBatchOptions {
  redis: RedisClient;
  keys: ReachKeys;
  settings: {
    /** The lease each answer names (`lease_ms`), as a single heartbeat's does. */
    offlineMs: number;
  };
}

/** A status a beat changed. */
export interface BeatStatusChange {
  agent_id: string;
  from: AgentStatus;
  to: AgentStatus;
}

/** A batch's answers, one per beat in order, and the status changes among them. */
export interface BatchOutcome {
  acks: BatchBeatReply[];
  changes: BeatStatusChange[];
}

/**
 * The heartbeats of many agents in one request (`POST /v1/agents/heartbeats`): a relay beats for
 * every endpoint agent it serves. Each beat carries its agent's own token and is checked by
 * heartbeat-1.lua exactly as a single heartbeat is; a refused beat is answered with its code
 * (AGENT_NOT_FOUND, STALE_EPOCH, UNAUTHORIZED) and the others are applied. The scripts go out in
 * one pipeline per master. No Redis credentials are issued again here: a relay's agents use the
 * relay's own connection.
 */
export class HeartbeatBatch {
  private readonly listing: AgentListing;

  constructor(private readonly o: HeartbeatBatchOptions) {
    this.listing = new AgentListing(o.redis, o.keys);
  }

  /** Applies the beats; throws only when Redis fails (the whole request then fails). */
  async beat(beats: readonly BatchBeat[]): Promise<BatchOutcome> {
    const { redis, keys } = this.o;
    const pipeline = slotPipeline(redis);
    const calls = beats.map((beat) => {
      const token = parseToken(beat.token);
      if (!token) return undefined;
      const call = heartbeatCall(keys, beat.agent_id, token, beat);
      pipeline.add(keys.agent(beat.agent_id), (p) => heartbeatScript.queue(p, call));
      return call;
    });
    const replies = await pipeline.exec();
    const acks: BatchBeatReply[] = [];
    const changes: BeatStatusChange[] = [];
    const live: { agentId: string; changed: boolean }[] = [];
    let next = 0;
    beats.forEach((beat, i) => {
      const agentId = beat.agent_id;
      const call = calls[i];
      if (!call) {
        acks.push({ agent_id: agentId, error: 'UNAUTHORIZED' });
        return;
      }
      const [err, raw] = replies[next++] ?? [new Error('heartbeats: no reply'), null];
      if (err) throw err;
      const res = heartbeatScript.decode(raw, call.args);
      if (!res.ok) {
        acks.push({ agent_id: agentId, error: agentRefusal(agentId, res).code });
        return;
      }
      live.push({ agentId, changed: res.previous !== res.status });
      if (res.previous !== res.status)
        changes.push({ agent_id: agentId, from: res.previous, to: res.status });
      acks.push({
        agent_id: agentId,
        epoch: res.epoch,
        status: res.status,
        lease_ms: this.o.settings.offlineMs,
      });
    });
    // As a single heartbeat does: an agent that beats is kept in the set of agents.
    await this.listing.keep(live);
    return { acks, changes };
  }
}
