import { keySlot } from './key-slot.ts';
import { isValidScopedId, isValidTenant } from './tenants.ts';

/** Consumer group every agent inbox and capability pool is read with. */
export const WORKER_GROUP = 'workers';
/**
 * Consumer a pull agent hands a pool entry to when it may not take the task (docs/PROTOCOL.md §4,
 * Pull agents): the entry stays pending in the `workers` group, off the agent's own list, until
 * registry-sync puts it back in the pool for an agent that may take it.
 */
export const RELEASED_CONSUMER = '__released';
/** Consumer group registry-sync instances share on the acks stream. */
export const SYNC_GROUP = 'sync';
/** Default key prefix. */
export const DEFAULT_PREFIX = 'reach';

/**
 * The one key builder (BullMQ's QueueKeys). Keys that a single script touches together share a
 * hash tag: `{a:<agent>}` for an agent's record, inbox and pending deliveries, `{ts:<shard tag>}`
 * for the state, timeline, events, children and push configs of every task of one task shard
 * (`taskShards()` of them, `taskShardTag`), `{cb:<topic>}` for a callback topic and its
 * de-duplication marks, `{snapshot}` for the snapshot and its version; the acks stream and the due
 * set are split into `shards()` keys of their own tags (docs/PROTOCOL.md §8).
 */
export interface ReachKeys {
  readonly prefix: string;
  /** Set of every registered agent id. */
  agents(): string;
  /** Hash: an agent's registration, lease and status. */
  agent(agentId: string): string;
  /** Stream: the agent's push inbox. */
  inbox(agentId: string): string;
  /**
   * Hash: task_id → one entry per delivered, unfinished task attempt (its count is the agent's
   * live inflight count):
   * `<attempt>|<epoch>|<mark>|<entry id>|<received_at ms, 0 until the receipt>|<deadline_ms, 0 = none>`,
   * the mark empty, `probe` for a liveness probe or `pool=<capability>` for a task a pull agent
   * took from a pool (`<entry id>` is then the pool entry's). The delivery time is the entry id's.
   */
  pending(agentId: string): string;
  /**
   * Hash: task_id → when the agent last renewed the task's execution lease (ms, Redis time of
   * the `renew` ack); a task with no field has renewed nothing since its receipt.
   */
  leases(agentId: string): string;
  /**
   * Stream: notices to the agent that do not wait for a free slot (`cancel`: stop a running
   * task), read by the agent on a connection of its own with XREAD.
   */
  control(agentId: string): string;
  /**
   * String: the A2A AgentCard the agent last registered with, as JSON (absent when its latest
   * registration had none); kept with its record, under the agent's hash tag.
   */
  agentCard(agentId: string): string;
  /**
   * How many task shards there are (`REACH_TASK_SHARDS`): a task's keys live under its shard's
   * hash tag, so one script call may step every task of one shard.
   */
  taskShards(): number;
  /** The task shard (0 … `taskShards()` − 1) of a task: `shardOf(taskId, taskShards())`. */
  taskShardOf(taskId: string): number;
  /** Hash: a task's state. */
  task(taskId: string): string;
  /**
   * Sorted set: the search index of task shard `shard` (0 … `taskShards()` − 1), each task_id
   * scored by its created_at, written when the task is claimed (claim-n.lua, hold-n.lua) and
   * trimmed by the housekeeper; under the shard's hash tag, like the tasks' own keys.
   */
  taskIndex(shard: number): string;
  /** Set: the tasks submitted while handling this one (`parent_task_id`): a cancel reaches them. */
  children(taskId: string): string;
  /** List: a task's timeline entries as JSON. */
  timeline(taskId: string): string;
  /**
   * Stream: a running task's progress values and output chunks (`TaskEventField`), capped by
   * REACH_STREAM_MAX_CHUNKS / REACH_STREAM_MAX_BYTES, kept as long as the task.
   */
  taskEvents(taskId: string): string;
  /**
   * Hash: a task's A2A push-notification configs (config id → JSON), kept as long as the task
   * (apps/router/src/a2a/push-configs.ts).
   */
  a2aPush(taskId: string): string;
  /**
   * Stream: the archive outbox of task shard `shard`: one entry (`t`: task_id) per task made final
   * while archiving is on, appended by the script that made it final and deleted once the task's
   * record is in InfluxDB (registry-sync's archiver; docs/OBSERVABILITY.md, History).
   */
  archiveOutbox(shard: number): string;
  /**
   * Hash: the archive's tombstones of task shard `shard` for one UTC day of task ends (`day` =
   * end ms ÷ 86,400,000), task_id → end ms, kept REACH_ARCHIVE_TOMBSTONE_DAYS: where in
   * InfluxDB an archived task is read back from.
   */
  archiveTombstones(shard: number, day: number): string;
  /**
   * How many shards the acks stream and the due set have (`REACH_SHARDS`, read at each use: a
   * router takes registry-sync's published value).
   */
  shards(): number;
  /**
   * Stream: receipts and completions, shard `shard` (default 0) of the acks stream. Shard 0 is
   * `<prefix>:acks` (the only one with one shard); shard i > 0 is `<prefix>:{acks:<i>}`.
   */
  acks(shard?: number): string;
  /** The acks stream shard of an agent's acks (its register reply's `acks_stream`). */
  acksOf(agentId: string): string;
  /** Stream: a caller's callback topic. */
  callback(topic: string): string;
  /**
   * Hash: task_id → marks that the task's completion was already published to the topic, one hash
   * per topic and minute of completion (`minute` = completed_at ms ÷ 60,000, rounded down).
   */
  callbackMarks(topic: string, minute: number): string;
  /** String: marks that a task attempt's dead-letter notice was already published. */
  callbackDeadSeen(topic: string, taskId: string, attempt: number): string;
  /** String: the latest registry snapshot as JSON (`{snapshot}` hash tag, with its version). */
  snapshot(): string;
  /** Counter: the latest snapshot version (the snapshot's hash tag). */
  snapshotVersion(): string;
  /** Pub/sub channel announcing a new snapshot version. */
  snapshotChannel(): string;
  /**
   * Stream of registry deltas (the snapshot's hash tag): entry `<version>-0` carries the agents
   * that changed since version − 1 (`SnapshotDelta`).
   */
  snapshotDeltas(): string;
  /**
   * Hash: the settings registry-sync runs with that routers and tools share, environment variable
   * name → value (`REACH_OFFLINE_MS` → `30000`), see `PUBLISHED_SETTINGS`. Written at start-up and
   * with every snapshot; routers use these values over their own.
   */
  settings(): string;
  /** String: a lease lock for a duty that must run once across instances. */
  lock(name: string): string;
  /**
   * String: when the last housekeeping pass ran, ms of Redis time, by whichever registry-sync
   * instance led it; a new leader measures from it how long no pass ran (pass-mark-1.lua).
   */
  lastPass(): string;
  /** Hash: counters kept by the server (refused acks, dropped events, …). */
  stats(): string;
  /** Stream: fleet events (registrations, status changes, retries, dead letters), capped. */
  fleetEvents(): string;
  /**
   * Sorted set: task_id → when it needs attention (a retry that is due, a delivery to check),
   * shard `shard` (default 0) of the due set: `<prefix>:due`, then `<prefix>:{due:<i>}`.
   */
  due(shard?: number): string;
  /** The due set shard of a task. */
  dueOf(taskId: string): string;
  /** Sorted set: dead-lettered task_id → when it died. */
  dlq(): string;
  /** Stream: a capability's task pool that pull agents read with the `workers` group. */
  pool(capability: string): string;
  /**
   * Stream: one priority band of a capability's pool (pool-bands.ts): band 0 is `pool()` itself,
   * band b > 0 is `<pool()>:b<b>`, under the same `{pool:…}` hash tag.
   */
  poolBand(capability: string, band: number): string;
  /** Set: capabilities whose pools may hold tasks. */
  pools(): string;
  /**
   * Hash: the meta of a capability's waiting room (dispatch room/waiting-room.ts), whose other
   * keys are this one with a suffix, under the one `{room:<capability>}` hash tag: `:t` tenants
   * and `:k:<tenant>` fairness keys in fair order, `:q:<tenant>:<key>` tasks, `:x` each task's
   * place, `:e:<tenant>` arrival times, `:taking` tasks being sent, `:recent` recent waits.
   */
  room(capability: string): string;
  /** Set: capabilities whose waiting rooms may hold tasks. */
  rooms(): string;
  /** Set: capabilities whose waiting rooms ever held a task (their figures are reported). */
  roomsKnown(): string;
  /** String: the agent a session last went to. */
  session(sessionId: string): string;
  /**
   * String: how many retries of a capability registry-sync holds for a free slot (each update
   * kept 1 s); a router holding submissions of the capability leaves that many freed slots to them.
   */
  retriesWaiting(capability: string): string;
  /** Set: the ids of every API key (docs/SECURITY.md). */
  apiKeys(): string;
  /** Hash: one API key's record (hash of its secret, tenant, role, capabilities, label, expiry). */
  apiKey(keyId: string): string;
  /** Pub/sub channel announcing a revoked or changed API key (its key_id as the message). */
  apiKeysChannel(): string;
  /** Sorted set: an API key's tasks in flight (scoped task id → accepted at ms), for its quota. */
  inflightOf(keyId: string): string;
  /** Prefix of the request-rate counters of `@fastify/rate-limit`'s Redis store. */
  rateLimitPrefix(): string;
  /** Counter: failed authentications of one client address in the current window (expires). */
  authFailures(address: string): string;
  /** Stream: malformed stream entries set aside where an operator can see them (capped). */
  parked(): string;
  /**
   * Hash: one schedule (`POST /v1/schedules`) by its scoped id. Every schedule key shares the
   * `{sched}` hash tag, so a script may touch a schedule and the index together.
   */
  schedule(scheduleId: string): string;
  /** Set: the scoped id of every schedule (`{sched}`). */
  schedules(): string;
  /** Sorted set: scoped schedule id → its next tick (epoch ms); a paused schedule is absent (`{sched}`). */
  scheduleNext(): string;
  /** Hash: endpoint agent_id → its declaration as JSON (`EndpointRecord`, endpoints.ts; `{ep}`). */
  endpoints(): string;
  /**
   * Hash: endpoint agent_id → its secrets as JSON (`EndpointSecrets`): read by relays, never
   * returned by the API; no agent's Redis user may read it (`{ep}`).
   */
  endpointSecrets(): string;
  /** Pub/sub channel announcing a changed endpoint declaration (its agent_id as the message). */
  endpointsChannel(): string;
  /** Sorted set: relay id → when its membership lease ends (Redis time ms). */
  relays(): string;
  /**
   * Sharded pub/sub channel (SPUBLISH) of an endpoint agent: deliveries and cancel notices wake
   * the relay that serves it. Under the agent's hash tag, so it is published from the same slot.
   */
  wake(agentId: string): string;
  /**
   * Hash: a tenant's record (tenant-record.ts: `weight`, `max_queued`, `max_inflight`,
   * `max_fairness_weight`, `updated_at`), `<prefix>:{tenants}:t:<tenant>`. Under the `{tenants}`
   * hash tag with `tenants()`, so one MULTI writes a record and lists it.
   */
  tenant(tenant: string): string;
  /** Set: every tenant with a record, `<prefix>:{tenants}`. */
  tenants(): string;
  /**
   * Hash: capability → its shadow settings as JSON (`{rate, compare?}`, shadow.ts), written by the
   * operator API and read by routers (docs/PROTOCOL.md §7).
   */
  shadowSettings(): string;
  /**
   * List: an observing agent's shadow results, newest first (shadow.ts `ShadowRecord` as JSON),
   * capped and expiring; under the agent's hash tag.
   */
  observations(agentId: string): string;
  /**
   * Hash: the dependencies flagged down fleet-wide, `<dependency>|<capability>` → JSON
   * (`{since, agents}`), written by the leading registry-sync instance.
   */
  dependenciesDown(): string;
  /**
   * Sorted set: webhook delivery id → when its next try is due (Redis time ms; a try under way
   * holds it as its lease). Every webhook key shares the `{wh}` hash tag, so one script moves a
   * delivery between its states (docs/PROTOCOL.md, Webhook callbacks).
   */
  webhookDue(): string;
  /** Hash: a webhook delivery (webhooks.ts `WebhookField`): its URL, tenant, body and tries. */
  webhook(id: string): string;
  /** Sorted set: the deliveries that gave up, id → when; every tenant's, or `tenant`'s only. */
  webhookFailed(tenant?: string): string;
  /** Hash: where the items of a task (or of every task a schedule fires) go (`WebhookTargetField`). */
  webhookTarget(id: string): string;
  /** String: the last sequence number given to a task's webhook items. */
  webhookSeq(taskId: string): string;
  /**
   * String: the lease of the one router whose forwarder makes webhook deliveries (its consumer
   * name), so a task's items take their sequence numbers in the order they were recorded.
   */
  webhookForwarder(): string;
}

/**
 * The due set's member for a watchdog over a send in progress, `#<task_id>`: a submission a router
 * claimed and has not delivered yet, or a retry being sent. Only the sender that set it drops it,
 * without a check: a `#` is never part of an id, so dropping it can never remove the task's own
 * entry (`<task_id>`: a retry's backoff, a replay, a pooled task's expiry) that a fast failure may
 * have written meanwhile.
 */
export function watchdogMember(taskId: string): string {
  return `#${taskId}`;
}

/**
 * The due set's member over a final state's follow-up, `!<task_id>`: what must reach others once a
 * task is final and touches keys in other slots than the task — a cancel's `cancelled` callback
 * and its agent's notice, a death's dead-letter index and notice. Written before the state
 * changes and dropped once the follow-up is done; should the writer fail in between (a process
 * killed, a Cluster master lost), registry-sync finds it due and does the follow-up itself. `!` is
 * never part of an id either.
 */
export function followUpMember(taskId: string): string {
  return `!${taskId}`;
}

/**
 * How long after its writing a follow-up entry comes due: its writer's own follow-up takes
 * milliseconds and drops it first, unless the writer failed.
 */
export const FOLLOW_UP_AFTER_MS = 2000;

/** What a member of the due set stands for: the task's own entry, a watchdog, or a follow-up. */
export type DueKind = 'due' | 'watchdog' | 'follow-up';

/** The kind of a due set member (see `dueTaskId` for its task). */
export function dueKind(member: string): DueKind {
  return member.startsWith('#') ? 'watchdog' : member.startsWith('!') ? 'follow-up' : 'due';
}

/**
 * The task_id a member of the due set stands for (`<task_id>`, its watchdog `#<task_id>` or its
 * final state's follow-up `!<task_id>`).
 */
export function dueTaskId(member: string): string {
  return member.startsWith('#') || member.startsWith('!') ? member.slice(1) : member;
}

/** Ids in keys may be scoped to a tenant (`<tenant>/<id>`, see `scopedId`). */
function checkId(kind: string, id: string): string {
  if (!isValidScopedId(id))
    throw new TypeError(`invalid ${kind} id for a Redis key: ${JSON.stringify(id)}`);
  return id;
}

/** A tenant name in a key is checked like an id: it never holds `{`, `}` or `:`. */
function checkTenant(tenant: string): string {
  if (!isValidTenant(tenant))
    throw new TypeError(`invalid tenant for a Redis key: ${JSON.stringify(tenant)}`);
  return tenant;
}

/**
 * The shard (0 … `shards` − 1) an id belongs to: FNV-1a of the id, modulo the shard count. Every
 * process that shares the count computes the same one.
 */
export function shardOf(id: string, shards: number): number {
  if (!(shards > 1)) return 0;
  return fnv1a(id) % Math.floor(shards);
}

/** FNV-1a (32 bits, unsigned) of a text's UTF-16 code units: what shards and shadow picks hash. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const SLOTS = 16384;
const shardTags = new Map<number, readonly string[]>();

/**
 * The hash tag of task shard `shard` of `count` (`ts:<shard>.<k>`): the first `k` whose slot lies
 * in the middle half of the shard's even share of the 16,384 slots, so the shards' slots are
 * spaced about 16384/count apart (hashed tags bunch: 64 of them over 16 masters put twice the mean
 * on the busiest) and shard i of `count` lands on master i of a Cluster of `count` masters with
 * the slots split evenly, as `redis-cli --cluster create` splits them.
 */
export function taskShardTag(shard: number, count: number): string {
  const n = Math.max(1, Math.floor(count));
  let tags = shardTags.get(n);
  if (tags === undefined) {
    const made: string[] = [];
    const share = SLOTS / n;
    for (let i = 0; i < n; i++) {
      const from = Math.floor((i + 0.25) * share);
      const to = Math.max(from + 1, Math.floor((i + 0.75) * share));
      let k = 0;
      for (;;) {
        const slot = keySlot(`ts:${i}.${k}`);
        if (slot >= from && slot < to) break;
        k++;
      }
      made.push(`ts:${i}.${k}`);
    }
    tags = made;
    shardTags.set(n, tags);
  }
  const tag = tags[shard];
  if (tag === undefined) throw new RangeError(`task shard ${shard} of ${n} does not exist`);
  return tag;
}

/** What {@link reachKeys} reads at each use. */
export interface ShardCounts {
  /** Shards of the acks stream and the due set (`REACH_SHARDS`). @default 1 */
  shards?: () => number;
  /** Task shards (`REACH_TASK_SHARDS`). @default 1 */
  taskShards?: () => number;
}

/**
 * Builds every Redis key under `prefix` (default `reach`). `counts.shards` gives the shard count
 * of the acks stream and the due set when it is read, `counts.taskShards` that of the tasks' keys
 * (each default 1).
 */
export function reachKeys(prefix: string = DEFAULT_PREFIX, counts: ShardCounts = {}): ReachKeys {
  const shards = counts.shards ?? (() => 1);
  const taskShards = counts.taskShards ?? (() => 1);
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(prefix)) {
    throw new TypeError(`invalid key prefix ${JSON.stringify(prefix)}`);
  }
  const p = prefix;
  const agentTag = (id: string) => `${p}:{a:${checkId('agent', id)}}`;
  const taskShardOf = (id: string) => shardOf(id, taskShards());
  // The key's kind comes before the id, which may hold `:`: `<prefix>:{ts:<tag>}:<kind>:<task_id>`.
  const taskKey = (kind: string, id: string) =>
    `${p}:{${taskShardTag(taskShardOf(id), taskShards())}}:${kind}:${checkId('task', id)}`;
  const topicTag = (topic: string) => `${p}:{cb:${checkId('topic', topic)}}`;
  return {
    prefix: p,
    agents: () => `${p}:agents`,
    agent: (id) => agentTag(id),
    inbox: (id) => `${agentTag(id)}:inbox`,
    pending: (id) => `${agentTag(id)}:pending`,
    leases: (id) => `${agentTag(id)}:leases`,
    control: (id) => `${agentTag(id)}:control`,
    agentCard: (id) => `${agentTag(id)}:card`,
    taskShards,
    taskShardOf,
    children: (id) => taskKey('ch', id),
    task: (id) => taskKey('h', id),
    taskIndex: (shard) => `${p}:{${taskShardTag(shard, taskShards())}}:index`,
    timeline: (id) => taskKey('tl', id),
    taskEvents: (id) => taskKey('ev', id),
    a2aPush: (id) => taskKey('push', id),
    archiveOutbox: (shard) => `${p}:{${taskShardTag(shard, taskShards())}}:archive`,
    archiveTombstones: (shard, day) =>
      `${p}:{${taskShardTag(shard, taskShards())}}:tomb:${Math.floor(day)}`,
    shards,
    acks: (shard = 0) => (shard === 0 ? `${p}:acks` : `${p}:{acks:${shard}}`),
    acksOf: (agentId) => {
      const shard = shardOf(agentId, shards());
      return shard === 0 ? `${p}:acks` : `${p}:{acks:${shard}}`;
    },
    callback: (topic) => topicTag(topic),
    callbackMarks: (topic, minute) => `${topicTag(topic)}:marks:${Math.floor(minute)}`,
    callbackDeadSeen: (topic, taskId, attempt) =>
      `${topicTag(topic)}:dead:${checkId('task', taskId)}:${attempt}`,
    // One hash tag: snapshot-3.lua and delta-1.lua share the version counter.
    snapshot: () => `${p}:{snapshot}`,
    snapshotVersion: () => `${p}:{snapshot}:version`,
    snapshotChannel: () => `${p}:snapshot:ch`,
    snapshotDeltas: () => `${p}:{snapshot}:deltas`,
    settings: () => `${p}:settings`,
    lock: (name) => `${p}:lock:${checkId('lock', name)}`,
    lastPass: () => `${p}:housekeeping:last_pass`,
    stats: () => `${p}:stats`,
    fleetEvents: () => `${p}:events`,
    due: (shard = 0) => (shard === 0 ? `${p}:due` : `${p}:{due:${shard}}`),
    dueOf: (taskId) => {
      const shard = shardOf(taskId, shards());
      return shard === 0 ? `${p}:due` : `${p}:{due:${shard}}`;
    },
    dlq: () => `${p}:dlq`,
    pool: (cap) => `${p}:{pool:${checkId('capability', cap)}}`,
    poolBand: (cap, band) =>
      band > 0
        ? `${p}:{pool:${checkId('capability', cap)}}:b${band}`
        : `${p}:{pool:${checkId('capability', cap)}}`,
    pools: () => `${p}:pools`,
    room: (cap) => `${p}:{room:${checkId('capability', cap)}}`,
    rooms: () => `${p}:rooms`,
    roomsKnown: () => `${p}:rooms:known`,
    session: (id) => `${p}:{s:${checkId('session', id)}}`,
    retriesWaiting: (cap) => `${p}:retries_waiting:${checkId('capability', cap)}`,
    apiKeys: () => `${p}:keys`,
    apiKey: (id) => `${p}:key:${checkId('key', id)}`,
    apiKeysChannel: () => `${p}:keys:ch`,
    inflightOf: (id) => `${p}:{q:${checkId('key', id)}}:inflight`,
    rateLimitPrefix: () => `${p}:rl:`,
    authFailures: (address) => `${p}:authfail:${address}`,
    parked: () => `${p}:parked`,
    schedule: (id) => `${p}:{sched}:s:${checkId('schedule', id)}`,
    schedules: () => `${p}:{sched}:ids`,
    scheduleNext: () => `${p}:{sched}:next`,
    endpoints: () => `${p}:{ep}:records`,
    endpointSecrets: () => `${p}:{ep}:secrets`,
    endpointsChannel: () => `${p}:ep:ch`,
    relays: () => `${p}:relays`,
    wake: (id) => `${agentTag(id)}:wake`,
    tenant: (tenant) => `${p}:{tenants}:t:${checkTenant(tenant)}`,
    tenants: () => `${p}:{tenants}`,
    shadowSettings: () => `${p}:shadow`,
    observations: (id) => `${agentTag(id)}:observations`,
    dependenciesDown: () => `${p}:dependencies:down`,
    webhookDue: () => `${p}:{wh}:due`,
    webhook: (id) => `${p}:{wh}:d:${checkId('webhook', id)}`,
    webhookFailed: (tenant) =>
      tenant === undefined ? `${p}:{wh}:failed` : `${p}:{wh}:failed:t:${checkTenant(tenant)}`,
    webhookTarget: (id) => `${p}:{wh}:t:${checkId('task', id)}`,
    webhookSeq: (taskId) => `${p}:{wh}:seq:${checkId('task', taskId)}`,
    webhookForwarder: () => `${p}:{wh}:fwd`,
  };
}
