import type { ReachKeys } from '@agent-reach/protocol';
import { exactKeyPattern } from './acl-rules.ts';

/**
 * Commands a relay runs (apps/relay): connection upkeep, its membership (TIME, MULTI/EXEC of
 * ZADD and ZREMRANGEBYSCORE, ZRANGEBYSCORE, ZREM), the declarations (HGETALL), its agents'
 * inboxes and control streams (XREADGROUP, XACK, XREAD) and the wake-ups (SUBSCRIBE, SSUBSCRIBE).
 * XADD is allowed only by a selector, on the acks streams, write-only.
 */
export const RELAY_COMMANDS = [
  '+ping',
  '+client|id',
  '+client|setname',
  '+cluster|slots',
  '+time',
  '+multi',
  '+exec',
  '+zadd',
  '+zremrangebyscore',
  '+zrangebyscore',
  '+zrem',
  '+hgetall',
  '+xreadgroup',
  '+xack',
  '+xread',
  '+subscribe',
  '+unsubscribe',
  '+ssubscribe',
  '+sunsubscribe',
] as const;

/** What a relay's Redis user may reach: the endpoint agents' keys and the shared relay keys. */
export interface RelayAclScope {
  keys: ReachKeys;
  /** Every declared endpoint agent. */
  agentIds: readonly string[];
  /** Every shard of the acks stream. */
  acksStreams: readonly string[];
}

/**
 * The `ACL SETUSER` rules of a relay's user, after `reset`: its commands on the endpoint agents'
 * inboxes and control streams only (never another agent's, never a task, a snapshot, a key), the
 * declarations read-only, the membership set, their wake channels and the declarations' channel;
 * XADD only to the acks streams, write-only. `password` is a plain password (`>`) or a stored
 * hash (`#…`), so the rules can be written again without changing it.
 */
export function relayAclRules(scope: RelayAclScope, password: string): string[] {
  const { keys } = scope;
  const exact = (k: string) => exactKeyPattern(k);
  const agentKeys = scope.agentIds.flatMap((id) => [
    `~${exact(keys.inbox(id))}`,
    `~${exact(keys.control(id))}`,
  ]);
  const channels = scope.agentIds.map((id) => `&${exact(keys.wake(id))}`);
  return [
    'reset',
    'on',
    password.startsWith('#') ? password : `>${password}`,
    '-@all',
    ...RELAY_COMMANDS,
    `%R~${exact(keys.endpoints())}`,
    `%R~${exact(keys.endpointSecrets())}`,
    `~${exact(keys.relays())}`,
    ...agentKeys,
    `&${exact(keys.endpointsChannel())}`,
    ...channels,
    `(+xadd ${scope.acksStreams.map((s) => `%W~${exact(s)}`).join(' ')})`,
  ];
}

/** Separator of the parts of a relay user's name; never part of a prefix or an id. */
const SEP = '|';

/** The ACL user name of a relay: `<prefix>|relay|<relay_id>`. */
export function relayUsername(prefix: string, relayId: string): string {
  return [prefix, 'relay', relayId].join(SEP);
}

/** True when `username` is a relay user of `prefix`. */
export function isRelayUsername(prefix: string, username: string): boolean {
  const parts = username.split(SEP);
  return parts.length === 3 && parts[0] === prefix && parts[1] === 'relay';
}
