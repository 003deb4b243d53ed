/**
 * Who may take a task: the rule the router applies when it chooses an agent, and the one a pull
 * agent applies to a pool entry before it takes it (registry-sync checks it again when the first
 * receipt of a pooled task arrives, ack-task-n.lua). Any-language workers implement the same
 * rule (docs/PROTOCOL.md §4, Pull agents).
 */

/** What a task asks of the agent that runs it, with the wire names of its stream entry. */
export interface TaskPlacement {
  /** Every one must be among the agent's tags or capabilities. */
  tags?: readonly string[];
  /** The region asked for; undefined or '' for none. */
  region?: string;
  /** `strict`: only an agent of `region`; `prefer` (the default): any agent may take it. */
  region_policy?: 'strict' | 'prefer';
}

/** What an agent offers, as it registered. */
export interface AgentPlacement {
  /** '' or undefined when the agent registered none. */
  region?: string | undefined;
  tags?: readonly string[];
  capabilities: readonly string[];
}

/** Why an agent may not take a task. */
export type PlacementMiss = 'region' | 'tags';

/**
 * Undefined when `agent` may take `task`, else the first constraint it misses. A `prefer` region
 * is a choice the router makes among agents; whoever holds the task may run it.
 */
export function placementMiss(
  task: TaskPlacement,
  agent: AgentPlacement,
): PlacementMiss | undefined {
  if (task.region && task.region_policy === 'strict' && (agent.region ?? '') !== task.region)
    return 'region';
  for (const tag of task.tags ?? [])
    if (!agent.tags?.includes(tag) && !agent.capabilities.includes(tag)) return 'tags';
  return undefined;
}
