import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ReachKeys, RedisCredentials } from '@agent-reach/protocol';
import { isRelayUsername, relayAclRules, relayUsername } from './relay-acl-rules.ts';

/** How long a relay user may go without its relay in the membership set before it is removed. */
const ABSENT_GRACE_MS = 30_000;

/** What the relay ACL needs. */
export interface RelayAclOptions {
  redis: Redis | Cluster;
  keys: ReachKeys;
  logger: Logger;
}

/**
 * The Redis ACL users of relays (`REACH_AGENT_ACL=on`, docs/SECURITY.md): one per relay, made when
 * it asks for credentials (`POST /v1/relays/:relay_id/redis`), reaching the declared endpoint
 * agents' inboxes and control streams and nothing of any other agent. When the declarations
 * change, every relay user of the prefix is written again with the new set of agents, keeping its
 * password (by its stored hash). On a Cluster every node gets the users, replicas too.
 */
export class RelayAcl {
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<unknown> = Promise.resolve();
  /** The declared agent ids the users were last written with (none yet: write at the first refresh). */
  private written: string | undefined;
  /** Relay users found without a membership, with when that was first seen. */
  private absent = new Map<string, number>();

  constructor(private readonly o: RelayAclOptions) {
    this.log = o.logger.child({ module: 'relay-acl' });
  }

  /** Makes (or makes again, with a new password) `relayId`'s user on every node. */
  async issue(relayId: string): Promise<RedisCredentials> {
    const username = relayUsername(this.o.keys.prefix, relayId);
    const password = randomBytes(32).toString('base64url');
    const rules = relayAclRules(await this.scope(), password);
    await Promise.all(this.nodes().map((node) => node.acl('SETUSER', username, ...rules)));
    return { username, password };
  }

  /**
   * Writes every relay user of the prefix again when the declared agents changed since the last
   * time (or `force`). Returns how many users were written.
   */
  async refresh(force = false): Promise<number> {
    await this.removeGone();
    const scope = await this.scope();
    const ids = scope.agentIds.join('\n');
    if (!force && ids === this.written) return 0;
    let written = 0;
    for (const node of this.nodes()) {
      const users = (await node.acl('USERS')).filter((u) => isRelayUsername(this.o.keys.prefix, u));
      for (const username of users) {
        const hash = passwordHash(await node.acl('GETUSER', username));
        if (!hash) continue;
        await node.acl('SETUSER', username, ...relayAclRules(scope, `#${hash}`));
        written++;
      }
    }
    this.written = ids;
    if (written > 0)
      this.log.info({ users: written, agents: scope.agentIds.length }, 'relay redis users updated');
    return written;
  }

  /**
   * Removes the users of relays that left the membership set (`keys.relays()`, which forgets a
   * relay a minute after its lease ended), once refreshes found them absent for
   * {@link ABSENT_GRACE_MS}: a relay joins within seconds of getting its user, so a new one is
   * never taken for a gone one.
   */
  private async removeGone(): Promise<void> {
    const { keys } = this.o;
    const members = new Set(await this.o.redis.zrange(keys.relays(), 0, -1));
    const now = Date.now();
    const absentNow = new Map<string, number>();
    for (const node of this.nodes()) {
      const users = (await node.acl('USERS')).filter((u) => isRelayUsername(keys.prefix, u));
      const gone: string[] = [];
      for (const username of users) {
        const relayId = username.split('|')[2] as string;
        if (members.has(relayId)) continue;
        const since = this.absent.get(username) ?? now;
        if (now - since >= ABSENT_GRACE_MS) gone.push(username);
        else absentNow.set(username, since);
      }
      if (gone.length > 0) {
        await node.acl('DELUSER', ...gone);
        this.log.info({ users: gone }, 'removed redis users of relays gone');
      }
    }
    this.absent = absentNow;
  }

  /** Refreshes every `intervalMs` until {@link close}. */
  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.refreshing = this.refresh().catch((err: unknown) =>
        this.log.warn({ err }, 'relay redis user refresh failed'),
      );
    }, intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.refreshing;
  }

  private async scope() {
    const { keys } = this.o;
    const agentIds = (await this.o.redis.hkeys(keys.endpoints())).sort();
    const acksStreams = Array.from({ length: Math.max(1, keys.shards()) }, (_, i) => keys.acks(i));
    return { keys, agentIds, acksStreams };
  }

  private nodes(): Redis[] {
    const r = this.o.redis as Partial<Cluster>;
    return typeof r.nodes === 'function' ? r.nodes('all') : [this.o.redis as Redis];
  }
}

/** The first password hash of an `ACL GETUSER` reply (flat field/value list), or undefined. */
function passwordHash(reply: unknown): string | undefined {
  if (!Array.isArray(reply)) return undefined;
  for (let i = 0; i + 1 < reply.length; i += 2) {
    if (reply[i] !== 'passwords') continue;
    const list = reply[i + 1] as unknown;
    return Array.isArray(list) && typeof list[0] === 'string' ? list[0] : undefined;
  }
  return undefined;
}
