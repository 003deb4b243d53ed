/** What one agent instance's Redis ACL user may reach. */
export interface AgentAclScope {
  /** The agent's inbox stream (`keys.inbox(agentId)`). */
  inbox: string;
  /** The agent's control stream (`keys.control(agentId)`): read with XREAD. */
  control: string;
  /** Pull agents: the pool streams of its capabilities in its tenant (`keys.pool(scopedId(tenant, c))`). */
  pools: readonly string[];
  /** The acks stream shard it reports to (`keys.acksOf(agentId)`). */
  acksStream: string;
}

/**
 * Commands the worker-sdk agent (and a raw worker following docs/PROTOCOL.md) issues, besides
 * AUTH and QUIT, which need no permission: PING, CLIENT ID / SETNAME on its connections, and
 * CLUSTER SLOTS (the slot map a Cluster client reads; topology only, no data). CLIENT UNBLOCK, INFO (ioredis' ready check) and anything of @admin, @dangerous or @scripting are
 * left out: the SDK turns the ready check off and lets a stopping read end at its BLOCK timeout.
 */
export const AGENT_CONNECTION_COMMANDS = [
  '+ping',
  '+client|id',
  '+client|setname',
  '+cluster|slots',
] as const;

/**
 * Commands on the inbox, pools and control stream: read with the group, acknowledge, hand a pool
 * entry back; read the control stream (XREAD).
 */
export const AGENT_READ_COMMANDS = ['+xreadgroup', '+xack', '+xclaim', '+xread'] as const;

/** A key name as an ACL key pattern: glob characters escaped, so it matches that key only. */
export function exactKeyPattern(key: string): string {
  return key.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

/**
 * The `ACL SETUSER` rules of an agent instance's user (Redis 7 selectors):
 *
 * - root permissions: PING and CLIENT ID/SETNAME, and XADD to the acks stream shard only, with
 *   write-only access to it (`%W~`): the user cannot read anyone's acks;
 * - one selector: XREADGROUP, XACK, XCLAIM and XREAD on its own inbox, control stream and pools only.
 *
 * A command is allowed when the root or the selector allows it with all of its keys, so an XADD
 * to the inbox (root has XADD but not the key, the selector the key but not XADD) is refused, as is
 * every other command and key. `reset` first: the same name issued again gets exactly these rules.
 */
export function agentAclRules(scope: AgentAclScope, password: string): string[] {
  const readable = [scope.inbox, scope.control, ...scope.pools].map(
    (k) => `~${exactKeyPattern(k)}`,
  );
  return [
    'reset',
    'on',
    `>${password}`,
    'resetchannels',
    '-@all',
    ...AGENT_CONNECTION_COMMANDS,
    '+xadd',
    `%W~${exactKeyPattern(scope.acksStream)}`,
    `(${[...AGENT_READ_COMMANDS, ...readable].join(' ')})`,
  ];
}

/** Separator of the parts of an agent user's name; never part of a prefix or an id. */
const SEP = '|';

/** The ACL user name of an agent instance: `<prefix>|agent|<agent_id>|<instance_id>`. */
export function agentUsername(prefix: string, agentId: string, instanceId: string): string {
  return [prefix, 'agent', agentId, instanceId].join(SEP);
}

/** The agent and instance an ACL user name of `prefix` stands for, or undefined for any other user. */
export function parseAgentUsername(
  prefix: string,
  username: string,
): { agentId: string; instanceId: string } | undefined {
  const parts = username.split(SEP);
  if (parts.length !== 4 || parts[0] !== prefix || parts[1] !== 'agent') return undefined;
  const [, , agentId, instanceId] = parts as [string, string, string, string];
  if (agentId === '' || instanceId === '') return undefined;
  return { agentId, instanceId };
}
