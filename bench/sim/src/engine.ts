import type { SnapshotHolder } from '@agent-reach/dispatch';
import { EventQueue } from './event-queue.ts';
import { createPolicy, type PolicyContext, type PolicyName } from './policies.ts';
import { streamOf } from './prng.ts';
import { SnapshotBoard } from './router-view.ts';
import { SimAgent } from './sim-agent.ts';
import type { SimTask, Workload } from './workload.ts';

/** How one policy run is set up. */
export interface EngineOptions {
  policy: PolicyName;
  seed: number;
  /** Routers sharing the fleet; tasks go to them in turn. @default 1 */
  routers?: number;
  /** Candidates tried per task before it goes to the pool (router's REACH_MAX_CANDIDATES). @default 3 */
  maxCandidates?: number;
  /** Registry snapshot period, simulated ms. @default 5000 */
  snapshotIntervalMs?: number;
  /** Share of the first tasks left out of the figures while the fleet fills. @default 0.1 */
  warmupShare?: number;
}

/** What one policy run measured. */
export interface RunResult {
  policy: PolicyName;
  /** Submit → done of each measured task, ms (tasks after the warm-up). */
  completionMs: Float64Array;
  /** Tasks whose top candidates were all full and that waited in, or passed through, the pool. */
  viaPool: number;
  /** Deliveries refused because the agent was full (the router's -4). */
  refusals: number;
  /** Per agent: share of its work capacity used over the measured window. */
  busyShare: number[];
  /** Per agent: the most tasks it ever ran at once. */
  peakInflight: number[];
  /** Per agent: its max_concurrency, for the peak check. */
  maxConcurrency: number[];
  /** Per agent: the tasks it started (warm-up included). */
  started: number[];
  /** Tasks completed, all of them (warm-up included). */
  completed: number;
}

type SimEvent =
  { at: number; kind: 'done'; agent: SimAgent; version: number } | { at: number; kind: 'snapshot' };

/**
 * Runs one policy over a workload, in simulated time. Arrivals are routed by the policy from
 * the deciding router's view; delivery re-checks the agent's real free slots (the router's
 * deliver script) and tries at most `maxCandidates`; a task none of them takes goes to the
 * capability's pool, which the next agent with a free slot reads. No agent ever runs more than
 * its max_concurrency — the run throws if it would. Agents past their parallel slots slow down
 * (SimAgent), so a policy that overloads one agent pays for it in completion time.
 */
export async function simulate(workload: Workload, options: EngineOptions): Promise<RunResult> {
  const maxCandidates = options.maxCandidates ?? 3;
  const intervalMs = options.snapshotIntervalMs ?? 5000;
  const tasks = workload.tasks;
  const warmIndex = Math.floor((options.warmupShare ?? 0.1) * tasks.length);
  const windowStart = tasks[warmIndex]?.arrive_ms ?? 0;
  const windowEnd = tasks[tasks.length - 1]?.arrive_ms ?? 0;

  const agents = workload.fleet.map((spec) => new SimAgent(spec, windowStart, windowEnd));
  const byId = new Map(agents.map((a) => [a.spec.agent_id, a]));
  const board = new SnapshotBoard();
  const views: SnapshotHolder[] = [];
  for (let r = 0; r < (options.routers ?? 1); r++) views.push(board.newView(intervalMs));
  const policy = createPolicy(options.policy);
  const policyRng = streamOf(options.seed, `policy:${options.policy}`);
  const poolRng = streamOf(options.seed, `pool:${options.policy}`);
  const trueInflight = (id: string): number => byId.get(id)?.inflight ?? 0;

  const events = new EventQueue<SimEvent>();
  const pool: number[] = [];
  let poolHead = 0;
  const done = new Float64Array(tasks.length);
  let running = 0;
  let completed = 0;
  let viaPool = 0;
  let refusals = 0;

  // An agent's next completion moves whenever its task count changes (its tasks share it),
  // so every change schedules a fresh event and older ones are dropped by version.
  const reschedule = (a: SimAgent, now: number): void => {
    const at = a.nextCompletionAt(now);
    if (at < Infinity) events.push({ at, kind: 'done', agent: a, version: a.version });
  };
  const started = new Map<SimAgent, number>();
  const start = (index: number, a: SimAgent, now: number): void => {
    started.set(a, (started.get(a) ?? 0) + 1);
    a.start(index, (tasks[index] as SimTask).work_ms, now);
    running += 1;
    reschedule(a, now);
  };
  const route = (index: number, now: number): void => {
    const task = tasks[index] as SimTask;
    const view = views[index % views.length] as SnapshotHolder;
    const ctx: PolicyContext = { view, trueInflight, rng: policyRng };
    const order = policy.order(task.task_id, ctx);
    for (let i = 0; i < order.length && i < maxCandidates; i++) {
      const a = byId.get(order[i] as string);
      if (!a) continue;
      if (!a.full) {
        start(index, a, now);
        view.noteInflight(a.spec.agent_id, a.inflight);
        return;
      }
      refusals += 1;
      view.noteInflight(a.spec.agent_id, a.spec.max_concurrency);
    }
    // The pool: any agent with a free slot reads it at once (the first reader wins), else the
    // task waits for the next slot to free.
    viaPool += 1;
    const free = agents.filter((a) => !a.full);
    const taker = free[Math.floor(poolRng() * free.length)];
    if (taker) start(index, taker, now);
    else pool.push(index);
  };
  const snapshotNow = (now: number): Promise<void> =>
    board.publish(
      now,
      agents.map((a) => ({ spec: a.spec, inflight: a.inflight })),
    );

  await snapshotNow(0);
  events.push({ at: intervalMs, kind: 'snapshot' });
  let next = 0;
  while (next < tasks.length || events.size > 0) {
    const arrival = next < tasks.length ? (tasks[next] as SimTask).arrive_ms : Infinity;
    // Events at the same instant as an arrival go first, so a slot freed "now" is free for it.
    if (arrival < events.peekTime()) {
      route(next, arrival);
      next += 1;
      continue;
    }
    const ev = events.pop() as SimEvent;
    if (ev.kind === 'snapshot') {
      await snapshotNow(ev.at);
      if (next < tasks.length || running > 0)
        events.push({ at: ev.at + intervalMs, kind: 'snapshot' });
      continue;
    }
    const a = ev.agent;
    if (ev.version !== a.version) continue;
    const index = a.complete(ev.at);
    running -= 1;
    completed += 1;
    done[index] = ev.at - (tasks[index] as SimTask).arrive_ms;
    if (poolHead < pool.length) start(pool[poolHead++] as number, a, ev.at);
    else reschedule(a, ev.at);
  }
  for (const a of agents) a.finish(windowEnd);

  const span = Math.max(1, windowEnd - windowStart);
  return {
    policy: options.policy,
    completionMs: done.subarray(warmIndex),
    viaPool,
    refusals,
    busyShare: agents.map((a) => a.busyMs / span),
    peakInflight: agents.map((a) => a.peak),
    maxConcurrency: agents.map((a) => a.spec.max_concurrency),
    started: agents.map((a) => started.get(a) ?? 0),
    completed,
  };
}
