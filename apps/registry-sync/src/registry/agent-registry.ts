import { randomBytes, randomUUID } from 'node:crypto';
import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import { slotsScript } from '@agent-reach/dispatch';
import {
  AgentRecordField as F,
  DEFAULT_TENANT,
  PROBE_CAPABILITY,
  poolStreams,
  scopedId,
  WORKER_GROUP,
  type Channel,
  type FullAgentView,
  type RedisCredentials,
  type HeartbeatBody,
  type ReachKeys,
  type RegisterBody,
  type RegisterReply,
  type AgentAck,
  type AgentStatus,
  toAgentView,
} from '@agent-reach/protocol';
import { httpError, OPEN_PRINCIPAL, type Principal } from '@agent-reach/service-kit';
import type { AgentAcl } from '../acl/agent-acl.ts';
import type { AgentAclScope } from '../acl/acl-rules.ts';
import { checkRegistration } from './access.ts';
import { inputSchemasToStore } from './input-schemas.ts';
import { deregisterScript } from '../commands/deregister.ts';
import { heartbeatScript } from '../commands/heartbeat.ts';
import { registerScript } from '../commands/register.ts';
import type { AgentAuthRefusal } from '../commands/reply-slots.ts';
import { serveScript } from '../commands/serve.ts';

import { AgentListing } from './agent-listing.ts';
import { agentRefusal, heartbeatCall } from './heartbeats.ts';
import { formatToken, mintSecret, type ParsedToken } from './token.ts';
import { ownValue } from '../capability-settings.ts';

/** What the registry needs to know of the settings. */
export interface RegistrySettings {
  heartbeatIntervalMs: number;
  offlineMs: number;
  execLeaseMs: number;
  execLeaseMsByCapability: Record<string, number>;
}

/** A heartbeat's answer: the ack, the status before, and new Redis credentials when issued. */
export type HeartbeatResult = AgentAck & { previous: AgentStatus };

/** How an agent registers, besides its body and key. */
export interface RegisterHow {
  /** A relay registers it: an endpoint agent (endpoints/endpoint-registration.ts). */
  relay?: boolean;
}

/** Result of a register call, with whether a new instance took over. */
export interface Registration {
  reply: RegisterReply;
  newInstance: boolean;
}

/** What an agent registry needs. */
export interface AgentRegistryOptions {
  redis: RedisClient;
  keys: ReachKeys;
  settings: RegistrySettings;
  acl?: AgentAcl;
}

/**
 * Agents' registrations and leases; the only writer of registry state. With `acl` (REACH_AGENT_ACL
 * on), each instance gets a Redis ACL user of its own and must sign its acks (docs/SECURITY.md).
 */
export class AgentRegistry {
  private readonly listing: AgentListing;

  constructor(private readonly o: AgentRegistryOptions) {
    this.listing = new AgentListing(o.redis, o.keys);
  }

  /**
   * Registers or refreshes an agent instance for `principal` (an agent or operator key; the open
   * principal while auth is off). The agent belongs to the key's tenant: an agent_id another
   * tenant holds is refused (403), the running agent untouched.
   */
  async register(
    body: RegisterBody,
    principal: Principal = OPEN_PRINCIPAL,
    how: RegisterHow = {},
  ): Promise<Registration> {
    // Probe tasks are delivered with the probe mark (deliver-3.lua) by capability: an agent
    // serving `_probe` would let a caller's task pass for a probe.
    if (body.capabilities.includes(PROBE_CAPABILITY))
      throw httpError(
        'INVALID_BODY',
        `capability ${PROBE_CAPABILITY} is reserved for liveness probes; leave it out of capabilities`,
      );
    checkRegistration(body, principal);
    const inputSchemas = inputSchemasToStore(body);
    const tenant = principal.tenant;
    const shared = body.shared === true;
    const instanceId = body.instance_id ?? randomUUID();
    const { secret, secretHash } = mintSecret();
    const id = body.agent_id;
    const channel = body.channel ?? 'push';
    // The script writes the record (input schemas and relay mark included); the agent is listed
    // in the same round trip, after it. A refused registration's agent_id is another tenant's
    // live agent, listed already.
    const call = {
      keys: {
        agent: this.o.keys.agent(id),
        inbox: this.o.keys.inbox(id),
        pending: this.o.keys.pending(id),
      },
      args: {
        agentId: id,
        instanceId,
        capabilities: JSON.stringify(body.capabilities),
        maxConcurrency: body.max_concurrency,
        region: body.region ?? '',
        channel,
        meta: JSON.stringify(body.meta ?? {}),
        tokenHash: secretHash,
        group: WORKER_GROUP,
        ready: body.ready === false ? 0 : 1,
        tags: JSON.stringify(body.tags ?? []),
        observe: body.observe ? 1 : 0,
        priority: body.priority ?? 0,
        weight: body.weight ?? 1,
        tenant,
        shared: shared ? 1 : 0,
        ackKey: randomBytes(32).toString('hex'),
        // Read by routers for the capabilities' MCP tools (docs/MCP.md); '' drops those of the
        // registration before.
        inputSchemas: inputSchemas ?? '',
        // A relay's registration marks the record, so that deliveries wake the relay
        // (deliver-3.lua); any other registration of the agent_id takes the mark off.
        relay: how.relay ? 1 : 0,
      },
    };
    const agents = this.o.keys.agents();
    const [registered] = await Promise.all([
      registerScript.run(this.o.redis, call),
      this.o.redis.sadd(agents, id),
    ]);
    if (!registered.ok)
      throw httpError(
        'FORBIDDEN',
        `agent ${id} belongs to another tenant; choose another agent_id or register with a key of its tenant`,
      );
    const { epoch, newInstance, ackKey, fenced } = registered;
    this.listing.listed(id);
    const pools = this.poolsOf(tenant, channel, body.capabilities);
    for (const pool of pools) {
      await this.o.redis
        .xgroup('CREATE', pool, WORKER_GROUP, '0', 'MKSTREAM')
        .catch((err: unknown) => {
          if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
        });
    }
    let redis: RedisCredentials | undefined;
    if (this.o.acl) {
      // The fenced instance loses its Redis user, and with it its connections.
      if (fenced !== '') await this.o.acl.remove(id, fenced);
      redis = await this.o.acl.issue(id, instanceId, this.scopeOf(id, pools));
    }
    return {
      newInstance,
      reply: {
        agent_id: id,
        instance_id: instanceId,
        epoch,
        token: formatToken(epoch, secret),
        stream: this.o.keys.inbox(id),
        group: WORKER_GROUP,
        // The shard of the acks stream this agent reports to (one shard: the single acks stream).
        acks_stream: this.o.keys.acksOf(id),
        heartbeat_interval_ms: this.o.settings.heartbeatIntervalMs,
        lease_ms: this.o.settings.offlineMs,
        control_stream: this.o.keys.control(id),
        // The agent renews all its running tasks at once: at a third of its shortest lease.
        exec_lease_ms: Math.min(
          this.o.settings.execLeaseMs,
          ...body.capabilities.map(
            (c) => ownValue(this.o.settings.execLeaseMsByCapability, c) ?? Infinity,
          ),
        ),
        pools,
        tenant,
        shared,
        ...(redis ? { redis, ack_key: ackKey } : {}),
      },
    };
  }

  /**
   * A pull agent's pools: its capabilities' in its tenant (the names routers send pooled tasks
   * to), each as its priority bands' streams, highest band first (pool-bands.ts).
   */
  private poolsOf(tenant: string, channel: Channel, capabilities: readonly string[]): string[] {
    if (channel !== 'pull') return [];
    return capabilities.flatMap((c) => poolStreams(this.o.keys, scopedId(tenant, c)));
  }

  private scopeOf(agentId: string, pools: readonly string[]): AgentAclScope {
    return {
      inbox: this.o.keys.inbox(agentId),
      control: this.o.keys.control(agentId),
      pools,
      acksStream: this.o.keys.acksOf(agentId),
    };
  }

  /**
   * The instance's Redis user made again, when it is missing on some node (Redis restarted, or
   * REACH_AGENT_ACL was turned on while the agent ran) or the agent is back from OFFLINE (the
   * sweep removes the users of OFFLINE agents), with the instance's ack key.
   */
  private async reissue(
    agentId: string,
    instanceId: string,
    previous: AgentStatus,
  ): Promise<{ redis: RedisCredentials; ack_key?: string } | undefined> {
    if (!this.o.acl || instanceId === '') return undefined;
    if (previous !== 'OFFLINE' && !(await this.o.acl.missing(agentId, instanceId)))
      return undefined;
    const record = this.o.keys.agent(agentId);
    const [current, capabilities, channel, tenant, keptKey] = await this.o.redis.hmget(
      record,
      F.instanceId,
      F.capabilities,
      F.channel,
      F.tenant,
      F.ackKey,
    );
    // Removed or fenced since its heartbeat: no user (the sweep would remove it), and no write
    // that would leave a record of one field behind.
    if (current !== instanceId) return undefined;
    let ackKey = keptKey;
    if (!ackKey) {
      // A record from before signed acks has no key yet: the agent learns its new one here.
      await this.o.redis.hsetnx(record, F.ackKey, randomBytes(32).toString('hex'));
      ackKey = await this.o.redis.hget(record, F.ackKey);
    }
    let caps: string[] = [];
    try {
      const parsed: unknown = JSON.parse(capabilities ?? '[]');
      if (Array.isArray(parsed)) caps = parsed.filter((c): c is string => typeof c === 'string');
    } catch {
      caps = [];
    }
    const pools = this.poolsOf(
      tenant || DEFAULT_TENANT,
      channel === 'pull' ? 'pull' : 'push',
      caps,
    );
    const redis = await this.o.acl.issue(agentId, instanceId, this.scopeOf(agentId, pools));
    // Removed while its user was made: the user goes again now, not at the next sweep.
    if ((await this.o.redis.hget(record, F.instanceId)) !== instanceId) {
      await this.o.acl.remove(agentId, instanceId);
      return undefined;
    }
    return { redis, ...(ackKey ? { ack_key: ackKey } : {}) };
  }

  /**
   * Switches an agent out of observation mode: the agent itself, with its token, or an operator
   * (`operator`, the route checked the key), who may set its routing weight in the same step.
   */
  async serve(agentId: string, by: ParsedToken | 'operator', weight?: number): Promise<void> {
    const res = await serveScript.run(this.o.redis, {
      keys: { agent: this.o.keys.agent(agentId) },
      args: {
        tokenHash: by === 'operator' ? '' : by.secretHash,
        tokenEpoch: by === 'operator' ? '' : by.epoch,
        weight: weight ?? '',
      },
    });
    if (!res.ok) this.throwRefusal(agentId, res);
  }

  /**
   * Renews a lease; returns the ack and the status the agent had before, with new Redis
   * credentials when the instance's user had to be made again.
   */
  async heartbeat(
    agentId: string,
    token: ParsedToken,
    body: HeartbeatBody,
  ): Promise<HeartbeatResult> {
    const call = heartbeatCall(this.o.keys, agentId, token, body);
    // One command, auto-pipelined with the other requests' (no pipeline of its own).
    const res = await heartbeatScript.run(this.o.redis, call);
    if (!res.ok) this.throwRefusal(agentId, res);
    await this.listing.keep([{ agentId, changed: res.previous !== res.status }]);
    const issued = await this.reissue(agentId, res.instanceId, res.previous);
    return {
      agent_id: agentId,
      epoch: res.epoch,
      status: res.status,
      previous: res.previous,
      lease_ms: this.o.settings.offlineMs,
      ...(issued ?? {}),
    };
  }

  /** Starts draining an agent at its own request (its token). */
  async deregister(agentId: string, token: ParsedToken): Promise<AgentAck> {
    const res = await this.startDraining(agentId, token);
    // Its last acks are written: the instance's Redis user goes now.
    await this.o.acl?.remove(agentId, res.instanceId);
    return this.drainingAck(agentId, res.epoch);
  }

  /**
   * Starts draining an agent for an operator (the route checked the key): no new tasks; those in
   * flight finish, then the sweeper removes it. Its Redis user is not removed here, as the agent
   * did not say its acks are written (the ACL sweep takes a DRAINING agent's user). `changed` is
   * false when it was draining already.
   */
  async drain(agentId: string): Promise<AgentAck & { changed: boolean }> {
    const res = await this.startDraining(agentId, 'operator');
    return { ...this.drainingAck(agentId, res.epoch), changed: res.previous !== 'DRAINING' };
  }

  private async startDraining(agentId: string, by: ParsedToken | 'operator') {
    const res = await deregisterScript.run(this.o.redis, {
      keys: { agent: this.o.keys.agent(agentId), pending: this.o.keys.pending(agentId) },
      args: {
        tokenHash: by === 'operator' ? '' : by.secretHash,
        tokenEpoch: by === 'operator' ? '' : by.epoch,
        // An operator's drain keeps the record a lease long, so the agent hears of it (and its
        // SDK closes rather than registering again) even when idle.
        holdMs: this.o.settings.offlineMs,
      },
    });
    if (!res.ok) this.throwRefusal(agentId, res);
    return res;
  }

  private drainingAck(agentId: string, epoch: number): AgentAck {
    return { agent_id: agentId, epoch, status: 'DRAINING', lease_ms: this.o.settings.offlineMs };
  }

  /** Every registered agent, with its live inflight count. */
  async list(): Promise<FullAgentView[]> {
    const ids = (await this.o.redis.smembers(this.o.keys.agents())).sort();
    return this.views(ids);
  }

  /** One agent, or undefined. */
  async get(agentId: string): Promise<FullAgentView | undefined> {
    const [view] = await this.views([agentId]);
    return view;
  }

  /**
   * Keeps the AgentCard of the agent's latest registration, or drops the one before when this
   * registration had none (`keys.agentCard`, under the agent's hash tag, kept like its record).
   */
  async keepCard(agentId: string, card: Record<string, unknown> | undefined): Promise<void> {
    if (card === undefined) await this.o.redis.del(this.o.keys.agentCard(agentId));
    else await this.o.redis.set(this.o.keys.agentCard(agentId), JSON.stringify(card));
  }

  /** The AgentCard of the agent's latest registration, as JSON, or undefined. */
  async card(agentId: string): Promise<string | undefined> {
    return (await this.o.redis.get(this.o.keys.agentCard(agentId))) ?? undefined;
  }

  /** Reads records and live inflight counts for the ids in one pipeline. */
  async views(ids: string[]): Promise<FullAgentView[]> {
    if (ids.length === 0) return [];
    const pipeline = slotPipeline(this.o.redis).add(this.o.keys.agent(ids[0] ?? ''), (p) =>
      p.time(),
    );
    for (const id of ids)
      pipeline.add(this.o.keys.agent(id), (p) => {
        p.hgetall(this.o.keys.agent(id));
        slotsScript.queue(p, {
          keys: { pending: this.o.keys.pending(id), inbox: this.o.keys.inbox(id) },
          args: {},
        });
      });
    const replies = await pipeline.exec();
    const [, time] = replies[0] ?? [];
    const [sec, usec] = (time as [string, string] | undefined) ?? ['0', '0'];
    const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    const views: FullAgentView[] = [];
    ids.forEach((_, i) => {
      const record = (replies[1 + 2 * i]?.[1] ?? {}) as Record<string, string>;
      const inflight = Number(replies[2 + 2 * i]?.[1] ?? 0);
      const view = toAgentView(record, inflight, now);
      if (view) views.push(view);
    });
    return views;
  }

  private throwRefusal(agentId: string, res: AgentAuthRefusal): never {
    const { code, message } = agentRefusal(agentId, res);
    throw httpError(code, message);
  }
}
