import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  AgentRecordField as F,
  type AgentStatus,
  type ReachKeys,
  type RedisCredentials,
} from '@agent-reach/protocol';
import {
  agentAclRules,
  agentUsername,
  parseAgentUsername,
  type AgentAclScope,
} from './acl-rules.ts';

/**
 * Statuses whose instance keeps its Redis user; OFFLINE loses it (see {@link AgentAcl.sweep}). A
 * DRAINING agent keeps it until its record is removed, so the tasks it still runs after an
 * operator's drain are acked; its own deregister removes it at once, its acks written.
 */
const KEEPS_USER: readonly AgentStatus[] = [
  'STARTING',
  'HEALTHY',
  'SUSPECT',
  'DEGRADED',
  'DRAINING',
];

/** What the agent ACL needs. */
export interface AgentAclOptions {
  redis: Redis | Cluster;
  keys: ReachKeys;
  logger: Logger;
}

/**
 * The Redis ACL users of agent instances (`REACH_AGENT_ACL=on`, docs/SECURITY.md): one per
 * instance, made at registration, made again when a heartbeat finds it missing (a Redis restart)
 * or the agent back from OFFLINE, and removed when the instance is fenced, deregisters, goes
 * OFFLINE or its record is gone. ACL users live in each Redis server, not in the keyspace: on a
 * Cluster every command here goes to every node, replicas too, so a promoted replica has the users
 * already (`nodes()`); standalone, to the one server. A node that lacks one (a restart, a failover
 * to a server that never had it) is found by the next heartbeat, which makes it again.
 * Passwords are never stored: a user made again gets a new one.
 */
export class AgentAcl {
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: AgentAclOptions) {
    this.log = o.logger.child({ module: 'agent-acl' });
  }

  /**
   * Checks at start-up that every node takes the users this class makes: registry-sync's own Redis
   * user may run ACL, and the server knows selectors (Redis 7). Makes and removes a disabled user.
   * Throws a message that says what to change.
   */
  async check(): Promise<void> {
    const probe = `${this.o.keys.prefix}|check|${process.pid}`;
    try {
      for (const node of this.nodes()) {
        await node.acl('SETUSER', probe, 'reset', 'off', '(+ping ~check)');
        await node.acl('DELUSER', probe);
      }
    } catch (err: unknown) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(
        `settings: REACH_AGENT_ACL=on needs Redis 7 or later and a Redis user for registry-sync that may run ACL SETUSER/DELUSER/GETUSER/USERS (${why}); grant those or set REACH_AGENT_ACL=off`,
        { cause: err },
      );
    }
  }

  /** The user name of an agent instance. */
  username(agentId: string, instanceId: string): string {
    return agentUsername(this.o.keys.prefix, agentId, instanceId);
  }

  /** Makes (or makes again, with a new password) the instance's user on every node. */
  async issue(
    agentId: string,
    instanceId: string,
    scope: AgentAclScope,
  ): Promise<RedisCredentials> {
    const username = this.username(agentId, instanceId);
    const password = randomBytes(32).toString('base64url');
    const rules = agentAclRules(scope, password);
    await Promise.all(this.nodes().map((node) => node.acl('SETUSER', username, ...rules)));
    return { username, password };
  }

  /** Removes the instance's user from every node; Redis closes its connections. */
  async remove(agentId: string, instanceId: string): Promise<void> {
    if (instanceId === '') return;
    const username = this.username(agentId, instanceId);
    await Promise.all(this.nodes().map((node) => node.acl('DELUSER', username)));
  }

  /** True when some node lacks the instance's user (that server restarted, or a sweep removed it). */
  async missing(agentId: string, instanceId: string): Promise<boolean> {
    const username = this.username(agentId, instanceId);
    const found = await Promise.all(this.nodes().map((node) => node.acl('GETUSER', username)));
    return found.some((user) => user === null);
  }

  /**
   * Removes the users of this prefix whose instance no longer holds its agent's record (fenced,
   * or the record is gone) or whose agent is OFFLINE. A user made meanwhile always
   * has its record written first, so it is never taken for a stale one; an agent whose user a
   * sweep removed just as it came back gets a new one with its next heartbeat. Returns how many
   * were removed.
   */
  async sweep(): Promise<number> {
    const byNode = await Promise.all(
      this.nodes().map(async (node) => ({ node, users: await node.acl('USERS') })),
    );
    let removed = 0;
    for (const { node, users } of byNode) {
      const ours = users.flatMap((name) => {
        const parsed = parseAgentUsername(this.o.keys.prefix, name);
        return parsed ? [{ name, ...parsed }] : [];
      });
      if (ours.length === 0) continue;
      // One command each (auto-pipelined), not a pipeline: on a Cluster the records span slots.
      const agentKeys = ours.map((u) => this.o.keys.agent(u.agentId));
      const records = await Promise.all(
        agentKeys.map((key) => this.o.redis.hmget(key, F.instanceId, F.status).catch(() => null)),
      );
      const stale = ours.filter((u, i) => {
        const record = records[i];
        if (record === null || record === undefined) return false;
        const [instanceId, status] = record;
        return instanceId !== u.instanceId || !KEEPS_USER.includes(status as AgentStatus);
      });
      if (stale.length === 0) continue;
      await node.acl('DELUSER', ...stale.map((u) => u.name));
      removed += stale.length;
      this.log.info(
        { users: stale.map((u) => ({ agent_id: u.agentId, instance_id: u.instanceId })) },
        'removed redis users of agents fenced, offline or gone',
      );
    }
    return removed;
  }

  /** Sweeps every `intervalMs` until {@link close}. */
  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.sweeping = this.sweep().catch((err: unknown) =>
        this.log.warn({ err }, 'redis user sweep failed'),
      );
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the sweeps; idempotent. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private nodes(): Redis[] {
    const r = this.o.redis as Partial<Cluster>;
    return typeof r.nodes === 'function' ? r.nodes('all') : [this.o.redis as Redis];
  }
}
