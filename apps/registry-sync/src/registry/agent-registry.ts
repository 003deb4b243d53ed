import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  PROBE_CAPABILITY,
  WORKER_GROUP,
  type AgentView,
  type HeartbeatBody,
  type ReachKeys,
  type RegisterBody,
  type RegisterReply,
  type AgentAck,
  type AgentStatus,
  toAgentView,
} from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';
import {
  decodeDeregisterReply,
  decodeHeartbeatReply,
  decodeRegisterReply,
  decodeServeReply,
  type AgentAuthRefusal,
} from '../commands/index.ts';

import { formatToken, mintSecret, type ParsedToken } from './token.ts';

/** What the registry needs to know of the settings. */
export interface RegistrySettings {
  heartbeatIntervalMs: number;
  offlineMs: number;
}

/** Result of a register call, with whether a new instance took over. */
export interface Registration {
  reply: RegisterReply;
  newInstance: boolean;
}

/** Agents' registrations and leases; the only writer of registry state. */
export class AgentRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly settings: RegistrySettings,
  ) {}

  /** Registers or refreshes an agent instance. */
  async register(body: RegisterBody): Promise<Registration> {
    // Probe tasks are delivered with the probe mark (deliver-3.lua) by capability: an agent
    // serving `_probe` would let a caller's task pass for a probe.
    if (body.capabilities.includes(PROBE_CAPABILITY))
      throw httpError(
        'INVALID_BODY',
        `capability ${PROBE_CAPABILITY} is reserved for liveness probes; leave it out of capabilities`,
      );
    const instanceId = body.instance_id ?? randomUUID();
    const { secret, secretHash } = mintSecret();
    const id = body.agent_id;
    const registered = await this.redis.reachRegister(
      this.keys.agent(id),
      this.keys.inbox(id),
      this.keys.pending(id),
      id,
      instanceId,
      JSON.stringify(body.capabilities),
      body.max_concurrency,
      body.region ?? '',
      body.channel ?? 'push',
      JSON.stringify(body.meta ?? {}),
      secretHash,
      WORKER_GROUP,
      body.ready === false ? 0 : 1,
      JSON.stringify(body.tags ?? []),
      body.observe ? 1 : 0,
      body.priority ?? 0,
      body.weight ?? 1,
    );
    const { epoch, newInstance } = decodeRegisterReply(registered);
    await this.redis.sadd(this.keys.agents(), id);
    const pools = body.channel === 'pull' ? body.capabilities.map((c) => this.keys.pool(c)) : [];
    for (const pool of pools) {
      await this.redis
        .xgroup('CREATE', pool, WORKER_GROUP, '0', 'MKSTREAM')
        .catch((err: unknown) => {
          if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
        });
    }
    return {
      newInstance,
      reply: {
        agent_id: id,
        instance_id: instanceId,
        epoch,
        token: formatToken(epoch, secret),
        stream: this.keys.inbox(id),
        group: WORKER_GROUP,
        // The shard of the acks stream this agent reports to (one shard: the single acks stream).
        acks_stream: this.keys.acksOf(id),
        heartbeat_interval_ms: this.settings.heartbeatIntervalMs,
        lease_ms: this.settings.offlineMs,
        pools,
      },
    };
  }

  /** Switches an agent out of observation mode. */
  async serve(agentId: string): Promise<void> {
    if (!decodeServeReply(await this.redis.reachServe(this.keys.agent(agentId)))) {
      throw httpError('AGENT_NOT_FOUND', `agent ${agentId} is not registered`);
    }
  }

  /** Renews a lease; returns the ack and the status the agent had before. */
  async heartbeat(
    agentId: string,
    token: ParsedToken,
    body: HeartbeatBody,
  ): Promise<AgentAck & { previous: AgentStatus }> {
    const [pipelineResult] = await this.redis
      .pipeline()
      .reachHeartbeat(
        this.keys.agent(agentId),
        token.secretHash,
        token.epoch,
        body.inflight,
        body.status === 'busy' ? 1 : 0,
        body.ready ? 1 : '',
      )
      .sadd(this.keys.agents(), agentId)
      .exec()
      .then((r) => r ?? []);
    if (!pipelineResult) throw new Error('heartbeat: empty reply');
    if (pipelineResult[0]) throw pipelineResult[0];
    const res = decodeHeartbeatReply(pipelineResult[1]);
    if (!res.ok) this.throwRefusal(agentId, res);
    return {
      agent_id: agentId,
      epoch: res.epoch,
      status: res.status,
      previous: res.previous,
      lease_ms: this.settings.offlineMs,
    };
  }

  /** Starts draining an agent. */
  async deregister(agentId: string, token: ParsedToken): Promise<AgentAck> {
    const res = decodeDeregisterReply(
      await this.redis.reachDeregister(
        this.keys.agent(agentId),
        this.keys.pending(agentId),
        token.secretHash,
        token.epoch,
      ),
    );
    if (!res.ok) this.throwRefusal(agentId, res);
    return {
      agent_id: agentId,
      epoch: res.epoch,
      status: 'DRAINING',
      lease_ms: this.settings.offlineMs,
    };
  }

  /** Every registered agent, with its live inflight count. */
  async list(): Promise<AgentView[]> {
    const ids = (await this.redis.smembers(this.keys.agents())).sort();
    return this.views(ids);
  }

  /** One agent, or undefined. */
  async get(agentId: string): Promise<AgentView | undefined> {
    const [view] = await this.views([agentId]);
    return view;
  }

  /** Reads records and live inflight counts for the ids in one pipeline. */
  async views(ids: string[]): Promise<AgentView[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline().time();
    for (const id of ids) pipeline.hgetall(this.keys.agent(id)).hlen(this.keys.pending(id));
    const replies = (await pipeline.exec()) ?? [];
    const [, time] = replies[0] ?? [];
    const [sec, usec] = (time as [string, string] | undefined) ?? ['0', '0'];
    const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    const views: AgentView[] = [];
    ids.forEach((_, i) => {
      const record = (replies[1 + 2 * i]?.[1] ?? {}) as Record<string, string>;
      const inflight = Number(replies[2 + 2 * i]?.[1] ?? 0);
      const view = toAgentView(record, inflight, now);
      if (view) views.push(view);
    });
    return views;
  }

  private throwRefusal(agentId: string, res: AgentAuthRefusal): never {
    switch (res.refusal) {
      case 'unknown_agent':
        throw httpError('AGENT_NOT_FOUND', `agent ${agentId} is not registered; register again`);
      case 'stale_epoch':
        throw httpError(
          'STALE_EPOCH',
          `a newer instance of ${agentId} registered (epoch ${res.currentEpoch}); this instance is fenced off`,
        );
      case 'wrong_token':
        throw httpError(
          'UNAUTHORIZED',
          'token does not match this agent; use the token from the register reply',
        );
    }
  }
}
