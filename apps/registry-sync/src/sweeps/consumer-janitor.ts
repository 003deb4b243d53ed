import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { WORKER_GROUP, type ReachKeys } from '@agent-reach/protocol';
import { delConsumerScript } from '../commands/delconsumer.ts';

/** Consumers idle this long, other than the agent's current instance, are removed once empty. */
const IDLE_MS = 60_000;

/** What a consumer janitor needs. */
export interface ConsumerJanitorOptions {
  redis: RedisClient;
  keys: ReachKeys;
  logger: Logger;
  /** @default IDLE_MS */
  idleMs?: number;
}

/**
 * Removes the consumers that earlier instances of an agent left in its inbox's group, but only
 * once their pending lists are empty (checked in the same script as the delete).
 */
export class ConsumerJanitor {
  private readonly idleMs: number;
  private readonly log: Logger;

  constructor(private readonly o: ConsumerJanitorOptions) {
    this.idleMs = o.idleMs ?? IDLE_MS;
    this.log = o.logger.child({ module: 'consumer-janitor' });
  }

  /** One pass over every agent's inbox; returns how many consumers were removed. */
  async sweep(): Promise<number> {
    let removed = 0;
    for (const id of await this.o.redis.smembers(this.o.keys.agents())) {
      const current = await this.o.redis.hget(this.o.keys.agent(id), 'instance_id');
      let consumers: unknown[];
      try {
        consumers = (await this.o.redis.xinfo(
          'CONSUMERS',
          this.o.keys.inbox(id),
          WORKER_GROUP,
        )) as unknown[];
      } catch {
        continue; // no stream or group yet
      }
      for (const raw of consumers) {
        const info = raw as (string | number)[];
        const name = String(info[info.indexOf('name') + 1]);
        const idle = Number(info[info.indexOf('idle') + 1]);
        if (name === current || idle < this.idleMs) continue;
        const deleted = await delConsumerScript.run(this.o.redis, {
          keys: { inbox: this.o.keys.inbox(id) },
          args: { group: WORKER_GROUP, consumer: name },
        });
        if (deleted) {
          removed++;
          this.log.info(
            { agent_id: id, consumer: name },
            'removed an old instance’s empty consumer',
          );
        }
      }
    }
    return removed;
  }
}
