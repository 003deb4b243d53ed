import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  decodeTask,
  entryShapeProblem,
  DEFAULT_TENANT,
  placementMiss,
  poolStreams,
  RELEASED_CONSUMER,
  splitScopedId,
  taskFields,
  WORKER_GROUP,
  type ReachKeys,
  type SnapshotAgent,
} from '@agent-reach/protocol';
import { decide, isPull, isPush, pullSlots, type SnapshotHolder } from '@agent-reach/dispatch';
import { parkEntry } from '../acks/parking.ts';
import { requeueScript } from '../commands/requeue.ts';
import type { TaskOutcomes } from '../tasks/outcomes.ts';
import type { Resender } from '../tasks/resender.ts';

/** A pull agent reads the pools of its own tenant (docs/PROTOCOL.md §4, Pull agents). */
function readsPoolOf(agent: SnapshotAgent, tenant: string): boolean {
  return isPull(agent) && (agent.tenant || DEFAULT_TENANT) === tenant;
}

/** The consumer name registry-sync reads pools with. */
const DISPATCHER = '__dispatcher';
const BATCH = 50;

type Entries = [string, string[]][];

/** What tells whether a pool entry's task still waits in its pool: sent, to no agent, its attempt. */
const POOLED = taskFields('status', 'agentId', 'attempt');

/**
 * The entry's task is still being put in its pool: its sender's XADD has landed and its record of
 * the send (record-pooled-1.lua, `accepted` to `sent`) not yet. Such an entry is left pending
 * rather than deleted: the receipt-timeout requeue reads it again once the record landed, and a
 * sender that stopped in between leaves the task to its watchdog.
 */
function beingPooled(task: { status?: string; attempt?: number }, entryAttempt: number): boolean {
  return task.status === 'accepted' && task.attempt === entryAttempt;
}

/** What a pool drainer needs. */
export interface PoolDrainerOptions {
  redis: RedisClient;
  keys: ReachKeys;
  snapshot: SnapshotHolder;
  outcomes: TaskOutcomes;
  resender: Resender;
  receiptTimeoutMs: number;
  logger: Logger;
}

/**
 * Looks after capability pools, one per tenant and capability, each a stream per priority band
 * (pool-bands.ts), taken highest band first. A pool with no live pull agent of
 * its tenant but push agents with room (of its tenant, or shared) is drained into them (a task queued while no agent was live is delivered when one
 * appears, of either channel). Entries a pull agent read and never reported within the receipt
 * timeout are put back for others; so are, at once, those a pull agent released because it may
 * not take their task (handed to {@link RELEASED_CONSUMER}), once a live pull agent that may take
 * it is known.
 */
export class PoolDrainer {
  private readonly log: Logger;

  constructor(private readonly o: PoolDrainerOptions) {
    this.log = o.logger.child({ module: 'pool-drainer' });
  }

  /** One pass over the pools that may hold tasks; returns how many tasks moved. */
  async sweep(): Promise<number> {
    let moved = 0;
    for (const poolId of await this.o.redis.smembers(this.o.keys.pools())) {
      // A tenant's pool of a capability: `<tenant>/<capability>` (bare for the default tenant).
      const { tenant, id: capability } = splitScopedId(poolId);
      // Its priority bands, highest first (pool-bands.ts): the empty ones are passed over.
      const streams: string[] = [];
      for (const stream of poolStreams(this.o.keys, poolId))
        if ((await this.o.redis.xlen(stream)) > 0) streams.push(stream);
      if (streams.length === 0) {
        await this.o.redis.srem(this.o.keys.pools(), poolId);
        continue;
      }
      for (const pool of streams) {
        await this.ensureGroup(pool);
        moved += await this.requeueAbandoned(pool);
        moved += await this.requeueReleased(pool, capability, tenant);
      }
      const decision = decide(
        this.o.snapshot.agentsFor(capability),
        { taskId: capability, capability, tenant },
        this.o.snapshot.ringFor(capability),
        this.o.snapshot.inflightOf,
      );
      // Pull agents read their own tenant's pools only (a shared one too): while one of the
      // pool's tenant is live, busy or not, it takes the pool; otherwise push agents of the
      // tenant and shared ones are given the tasks.
      if (pullSlots(decision, tenant) > 0) continue;
      let room = decision.ranked
        .filter((c) => isPush(c.agent))
        .reduce(
          (sum, c) =>
            sum + Math.max(0, c.agent.max_concurrency - this.o.snapshot.inflightOf(c.agent)),
          0,
        );
      // The higher bands are drained first: a more urgent task takes the room before others.
      for (const pool of streams) {
        if (room <= 0) break;
        const reply = (await this.o.redis.xreadgroup(
          'GROUP',
          WORKER_GROUP,
          DISPATCHER,
          'COUNT',
          Math.min(room, BATCH),
          'STREAMS',
          pool,
          '>',
        )) as [string, Entries][] | null;
        for (const [id, fields] of reply?.[0]?.[1] ?? []) {
          moved += await this.moveToPush(pool, id, fields);
          room--;
        }
      }
    }
    return moved;
  }

  private async moveToPush(pool: string, entryId: string, fields: string[]): Promise<number> {
    const task = await this.readEntry(pool, entryId, fields);
    if (task?.ok) {
      const stored = await this.pooledState(task.value.task_id);
      const { status, agentId, attempt } = stored;
      if (beingPooled(stored, task.value.attempt)) return 0;
      if (status === 'sent' && !agentId) {
        const decision = await this.o.outcomes.retry({
          taskId: task.value.task_id,
          attempt: attempt ?? 0,
          reason: 'unpooled',
          immediate: true,
        });
        // Delivered to a push agent first, then acknowledged in the pool.
        if (decision.kind === 'retry') await this.o.resender.resend(task.value.task_id);
      }
    }
    await this.o.redis.pipeline().xack(pool, WORKER_GROUP, entryId).xdel(pool, entryId).exec();
    return 1;
  }

  /**
   * Entries read by a pull agent that never reported them go back into the pool. Released
   * entries still waiting for an agent that may take them come back this way too, every receipt
   * timeout.
   */
  private async requeueAbandoned(pool: string): Promise<number> {
    const [, claimed] = (await this.o.redis.xautoclaim(
      pool,
      WORKER_GROUP,
      DISPATCHER,
      this.o.receiptTimeoutMs,
      '0-0',
      'COUNT',
      BATCH,
    )) as [string, Entries];
    let requeued = 0;
    for (const [id, fields] of claimed ?? []) {
      if (await this.putBack(pool, id, Array.isArray(fields) ? fields : null)) requeued++;
    }
    if (requeued > 0)
      this.log.info({ pool, requeued }, 'pool entries a pull agent never reported were put back');
    return requeued;
  }

  /**
   * Entries a pull agent released (it may not take their task: region or tags) go back into the
   * pool at the next sweep rather than after the receipt timeout, but only once a live pull agent
   * that may take the task is known: until then they wait, held by {@link RELEASED_CONSUMER}, so
   * an entry nobody may take does not circle between the pool and the agents that refuse it.
   */
  private async requeueReleased(pool: string, capability: string, tenant: string): Promise<number> {
    const held = (await this.o.redis.xpending(
      pool,
      WORKER_GROUP,
      '-',
      '+',
      BATCH,
      RELEASED_CONSUMER,
    )) as [string, string, number, number][];
    if (held.length === 0) return 0;
    const takers = this.o.snapshot
      .agentsFor(capability)
      .filter(
        (a) =>
          readsPoolOf(a, tenant) &&
          (a.status === 'HEALTHY' || a.status === 'SUSPECT' || a.status === 'DEGRADED'),
      );
    let requeued = 0;
    for (const [id] of held) {
      const [entry] = await this.o.redis.xrange(pool, id, id);
      const fields = entry?.[1] ?? null;
      const task = fields ? decodeTask(fields) : undefined;
      if (task?.ok && !takers.some((a) => placementMiss(task.value, a) === undefined)) continue;
      if (await this.putBack(pool, id, fields)) requeued++;
    }
    if (requeued > 0)
      this.log.debug(
        { pool, requeued },
        'released pool entries put back for agents that may take them',
      );
    return requeued;
  }

  /**
   * Puts a pool entry back as a new entry (requeue-1.lua) while its task still waits in the pool;
   * leaves it pending while its send is being recorded; otherwise, or when the entry cannot be
   * read, acknowledges and deletes it. True when put back.
   */
  private async putBack(pool: string, id: string, fields: string[] | null): Promise<boolean> {
    const task = await this.readEntry(pool, id, fields);
    if (task?.ok) {
      const stored = await this.pooledState(task.value.task_id);
      if (beingPooled(stored, task.value.attempt)) return false;
      if (stored.status === 'sent' && !stored.agentId) {
        const requeued = await requeueScript.run(this.o.redis, {
          keys: { pool },
          args: { group: WORKER_GROUP, entryId: id },
        });
        return requeued !== undefined;
      }
    }
    await this.o.redis.pipeline().xack(pool, WORKER_GROUP, id).xdel(pool, id).exec();
    return false;
  }

  /** What the task of a pool entry says of its send: status, agent and attempt. */
  private async pooledState(taskId: string) {
    return POOLED.decode(await this.o.redis.hmget(this.o.keys.task(taskId), ...POOLED.fields));
  }

  /** Decodes a pool entry; one that is not a task (written by hand) is parked on the way. */
  private async readEntry(pool: string, entryId: string, fields: string[] | null) {
    if (fields === null) return undefined;
    const problem = entryShapeProblem(fields);
    const task =
      problem === undefined ? decodeTask(fields) : { ok: false as const, error: problem };
    if (!task.ok) {
      const park = { source: 'pool' as const, stream: pool, entryId, fields, reason: task.error };
      await parkEntry(this.o.redis, this.o.keys, park, this.log);
    }
    return task;
  }

  private async ensureGroup(pool: string): Promise<void> {
    await this.o.redis
      .xgroup('CREATE', pool, WORKER_GROUP, '0', 'MKSTREAM')
      .catch((err: unknown) => {
        if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
      });
  }
}
