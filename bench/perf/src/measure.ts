import { monoMs } from './clock.ts';
import type { FromCaller, RunRequest, RunResult } from './load/protocol.ts';
import type { Role } from './proc/children.ts';
import { diffCalls, processCpuSeconds } from './proc/cpu.ts';
import type { GcTotals } from './proc/gc-trace.ts';
import type { RedisGauge } from './proc/redis-nodes.ts';
import type { ProcRef, RunningSystem } from './stack/running.ts';

/** CPU seconds per 1,000 completed tasks, by role; `total` adds them up. */
export type CpuPerK = Record<Role | 'total', number>;

/** One measured run: the caller's figures plus CPU and Redis commands around it. */
export interface RunRecord {
  result: RunResult;
  cpu: CpuPerK;
  /** CPU seconds per 1,000 completed tasks of each Redis node (`cpu.redis` is their sum). */
  redisNodes: Record<string, number>;
  /** CPU seconds per 1,000 completed tasks of each of the system's processes, by name. */
  procCpu: Record<string, number>;
  /** Redis commands per completed task, by command (scripts' inner commands included). */
  commands: Record<string, number>;
  /** Redis microseconds per completed task, by command (a script's time holds its inner commands'). */
  commandUsec: Record<string, number>;
  /** When the run was sent and answered, monotonic ms (to cut CPU profiles to the run). */
  window: { fromMs: number; toMs: number };
  /** `--trace-gc`: the router's collections during the run. */
  gc?: GcTotals;
  /** Agent-Reach: submissions that went to a waiting room during the run (room-entries.ts). */
  queued?: number;
}

const ROLES: readonly Role[] = ['caller', 'front', 'sync', 'workers', 'redis', 'endpoint'];

/**
 * Sends one run to the system's caller and reads, around it, the CPU time of each of the
 * system's processes and of each Redis node (/proc), and Redis' command counts.
 */
export async function measureRun(
  system: RunningSystem,
  redis: RedisGauge,
  req: RunRequest,
  timeoutMs: number,
): Promise<RunRecord> {
  const procs: ProcRef[] = [
    ...system.processes.filter((p) => req.mode === 'http' || !system.httpOnly.includes(p)),
    ...(system.cpuOnly ?? []),
  ];
  const before = procs.map((p) => processCpuSeconds(p.pid));
  const callsBefore = await redis.commandCalls();
  const redisBefore = redis.cpuSeconds();
  const fromMs = monoMs();
  system.caller.send({ type: 'run', req });
  const reply = (await system.caller.next(
    (m) =>
      (m.type === 'result' &&
        (m as Extract<FromCaller, { type: 'result' }>).result.id === req.id) ||
      (m.type === 'run-error' && m['id'] === req.id),
    timeoutMs,
    `the result of run ${req.id}`,
  )) as FromCaller;
  if (reply.type !== 'result')
    throw new Error(
      `${system.name} run ${req.id} failed: ${reply.type === 'run-error' ? reply.message : reply.type}`,
    );
  const toMs = monoMs();
  const redisAfter = redis.cpuSeconds();
  const after = procs.map((p) => processCpuSeconds(p.pid));
  const callsAfter = await redis.commandCalls();
  const result = revive(reply.result);
  const perK = (seconds: number) =>
    result.completed > 0 ? (seconds * 1000) / result.completed : NaN;
  const byRole: Record<Role, number> = {
    caller: 0,
    front: 0,
    sync: 0,
    workers: 0,
    redis: 0,
    endpoint: 0,
  };
  const redisNodes: Record<string, number> = {};
  redis.nodes.forEach((n, i) => {
    const used = (redisAfter[i] as number) - (redisBefore[i] as number);
    byRole.redis += used;
    redisNodes[n.name] = perK(used);
  });
  const procCpu: Record<string, number> = {};
  procs.forEach((p, i) => {
    const used = (after[i] as number) - (before[i] as number);
    byRole[p.role] += used;
    procCpu[p.name] = perK(used);
  });
  const cpu = { total: 0 } as CpuPerK;
  for (const role of ROLES) {
    cpu[role] = perK(byRole[role]);
    cpu.total += cpu[role];
  }
  const commands: Record<string, number> = {};
  const commandUsec: Record<string, number> = {};
  for (const [cmd, n] of diffCalls(callsBefore, callsAfter)) {
    commands[cmd] = result.completed > 0 ? n.calls / result.completed : NaN;
    commandUsec[cmd] = result.completed > 0 ? n.usec / result.completed : NaN;
  }
  return { result, cpu, redisNodes, procCpu, commands, commandUsec, window: { fromMs, toMs } };
}

/** JSON (the IPC channel) turns NaN into null: turn the missing figures back into NaN. */
function revive(r: RunResult): RunResult {
  const num = (v: number | null) => (typeof v === 'number' ? v : NaN);
  const summary = (s: RunResult['done']) => ({
    count: num(s.count),
    mean: num(s.mean),
    p50: num(s.p50),
    p90: num(s.p90),
    p99: num(s.p99),
    max: num(s.max),
  });
  return {
    ...r,
    elapsedMs: num(r.elapsedMs),
    tps: num(r.tps),
    received: summary(r.received),
    done: summary(r.done),
  };
}
