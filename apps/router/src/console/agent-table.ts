import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import { toAgentView, type ReachKeys } from '@agent-reach/protocol';
import { slotsScript } from '@agent-reach/dispatch';
import type { ConsoleAgent, ConsoleAgentsReply } from './schemas.ts';
import type { TaskSampler } from './recent-tasks.ts';

type Reply = [Error | null, unknown][];

/** What the agent table needs. */
export interface AgentTableOptions {
  redis: RedisClient;
  keys: ReachKeys;
  sampler: TaskSampler;
}

/**
 * The console's agent table, read live from Redis (records and pending counts, on Redis server
 * time), with each agent's success rate among the tasks this router sent recently. Read-only:
 * the router never writes registry state.
 */
export class AgentTable {
  constructor(private readonly o: AgentTableOptions) {}

  /** Up to `limit` agents by id. One SMEMBERS, then one pipeline of two reads per agent listed. */
  async read(limit: number): Promise<ConsoleAgentsReply> {
    const [ids, sample] = await Promise.all([
      this.o.redis.smembers(this.o.keys.agents()),
      this.o.sampler.sample(),
    ]);
    const listed = ids.sort().slice(0, limit);
    const agents: ConsoleAgent[] = [];
    if (listed.length > 0) {
      const pipeline = slotPipeline(this.o.redis).add(this.o.keys.agent(listed[0] ?? ''), (p) =>
        p.time(),
      );
      for (const id of listed)
        pipeline.add(this.o.keys.agent(id), (p) => {
          p.hgetall(this.o.keys.agent(id));
          slotsScript.queue(p, {
            keys: { pending: this.o.keys.pending(id), inbox: this.o.keys.inbox(id) },
            args: {},
          });
        });
      const replies = (await pipeline.exec()) as Reply;
      const [sec = '0', usec = '0'] = (replies[0]?.[1] as [string, string] | undefined) ?? [];
      const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
      listed.forEach((_, i) => {
        const record = (replies[1 + 2 * i]?.[1] ?? {}) as Record<string, string>;
        const view = toAgentView(record, Number(replies[2 + 2 * i]?.[1] ?? 0), now);
        if (!view) return;
        const o = sample.agents.get(view.agent_id) ?? {
          completed: 0,
          failed: 0,
          failures_by_code: {},
        };
        const finished = o.completed + o.failed;
        agents.push({
          ...view,
          recent: { ...o, success_rate: finished > 0 ? o.completed / finished : null },
        });
      });
    }
    return { agents, total: ids.length, sampled_tasks: sample.points.length };
  }
}
