import type { Redis } from 'ioredis';
import {
  processCpuSeconds,
  redisCommandCalls,
  redisCommandsProcessed,
  type CommandStat,
} from './cpu.ts';

/** One redis-server the bench started: its pid (for /proc) and a plain connection to it (for INFO). */
export interface RedisNode {
  /** How the report names it: `redis`, or a cluster node's port. */
  name: string;
  pid: number;
  /** A standalone connection to this node alone (INFO is per node, even in a cluster). */
  admin: Redis;
}

/**
 * The Redis servers a system runs on — one, or a cluster's masters — read around a run: CPU of
 * each process from /proc/<pid>/stat, command counts from each node's `INFO commandstats`, added up.
 */
export class RedisGauge {
  constructor(readonly nodes: readonly RedisNode[]) {}

  /** CPU seconds each node has used so far, in the order of {@link nodes}. */
  cpuSeconds(): number[] {
    return this.nodes.map((n) => processCpuSeconds(n.pid));
  }

  /** Calls and time per command so far, summed over the nodes. */
  async commandCalls(): Promise<Map<string, CommandStat>> {
    const sum = new Map<string, CommandStat>();
    for (const stats of await Promise.all(this.nodes.map((n) => redisCommandCalls(n.admin)))) {
      for (const [cmd, s] of stats) {
        const was = sum.get(cmd) ?? { calls: 0, usec: 0 };
        sum.set(cmd, { calls: was.calls + s.calls, usec: was.usec + s.usec });
      }
    }
    return sum;
  }

  /** Commands processed so far, summed over the nodes. */
  async commandsProcessed(): Promise<number> {
    const counts = await Promise.all(this.nodes.map((n) => redisCommandsProcessed(n.admin)));
    return counts.reduce((a, b) => a + b, 0);
  }
}
