import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decodeTask, encodeTask, WORKER_GROUP, type ReachKeys } from '@agent-reach/protocol';
import { decide, isPull, isPush, type SnapshotHolder } from '@agent-reach/dispatch';
import type { TaskOutcomes } from '../tasks/outcomes.ts';
import type { RetryDispatcher } from '../tasks/retry-dispatcher.ts';

/** The consumer name registry-sync reads pools with. */
const DISPATCHER = '__dispatcher';
const BATCH = 50;

type Entries = [string, string[]][];

/**
 * Looks after capability pools. A pool whose capability has no live pull agent but push agents
 * with room is drained into them (a task queued while no agent was live is delivered when one
 * appears, of either channel). Entries a pull agent read and never reported within the receipt
 * timeout are put back for others.
 */
export class PoolDrainer {
  private readonly log: Logger;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly snapshot: SnapshotHolder,
    private readonly outcomes: TaskOutcomes,
    private readonly dispatcher: RetryDispatcher,
    private readonly receiptTimeoutMs: number,
    logger: Logger,
  ) {
    this.log = logger.child({ module: 'pool-drainer' });
  }

  /** One pass over the pools that may hold tasks; returns how many tasks moved. */
  async sweep(): Promise<number> {
    let moved = 0;
    for (const capability of await this.redis.smembers(this.keys.pools())) {
      const pool = this.keys.pool(capability);
      if ((await this.redis.xlen(pool)) === 0) {
        await this.redis.srem(this.keys.pools(), capability);
        continue;
      }
      await this.ensureGroup(pool);
      moved += await this.requeueAbandoned(pool);
      const decision = decide(
        this.snapshot.agentsFor(capability),
        { taskId: capability, capability },
        this.snapshot.ringFor(capability),
        this.snapshot.inflightOf,
      );
      if (decision.ranked.some((c) => isPull(c.agent))) continue;
      const room = decision.ranked
        .filter((c) => isPush(c.agent))
        .reduce(
          (sum, c) =>
            sum + Math.max(0, c.agent.max_concurrency - this.snapshot.inflightOf(c.agent)),
          0,
        );
      if (room === 0) continue;
      const reply = (await this.redis.xreadgroup(
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
      }
    }
    return moved;
  }

  private async moveToPush(pool: string, entryId: string, fields: string[]): Promise<number> {
    const task = decodeTask(fields);
    if (task.ok) {
      const [status, agentId, attempt] = await this.redis.hmget(
        this.keys.task(task.value.task_id),
        'status',
        'agent_id',
        'attempt',
      );
      if (status === 'sent' && !agentId) {
        const decision = await this.outcomes.retry({
          taskId: task.value.task_id,
          attempt: Number(attempt),
          reason: 'unpooled',
          immediate: true,
        });
        // Delivered to a push agent first, then acknowledged in the pool.
        if (decision.kind === 'retry') await this.dispatcher.dispatch(task.value.task_id);
      }
    }
    await this.redis.pipeline().xack(pool, WORKER_GROUP, entryId).xdel(pool, entryId).exec();
    return 1;
  }

  /** Entries read by a pull agent that never reported them go back into the pool. */
  private async requeueAbandoned(pool: string): Promise<number> {
    const [, claimed] = (await this.redis.xautoclaim(
      pool,
      WORKER_GROUP,
      DISPATCHER,
      this.receiptTimeoutMs,
      '0-0',
      'COUNT',
      BATCH,
    )) as [string, Entries];
    let requeued = 0;
    for (const [id, fields] of claimed ?? []) {
      if (!Array.isArray(fields)) continue;
      const task = decodeTask(fields);
      const pipeline = this.redis.pipeline();
      if (task.ok) {
        const [status, agentId] = await this.redis.hmget(
          this.keys.task(task.value.task_id),
          'status',
          'agent_id',
        );
        if (status === 'sent' && !agentId) {
          pipeline.xadd(pool, '*', ...encodeTask(task.value));
          requeued++;
        }
      }
      await pipeline.xack(pool, WORKER_GROUP, id).xdel(pool, id).exec();
    }
    if (requeued > 0)
      this.log.info({ pool, requeued }, 'pool entries a pull agent never reported were put back');
    return requeued;
  }

  private async ensureGroup(pool: string): Promise<void> {
    await this.redis.xgroup('CREATE', pool, WORKER_GROUP, '0', 'MKSTREAM').catch((err: unknown) => {
      if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
    });
  }
}
