/**
 * The chaos test's agents: one process per agent_id (test/support/chaos/agent.ts), killed,
 * paused and restarted by pid. A restart keeps the agent_id and takes a new instance_id, so the
 * registry gives it a higher epoch and fences whatever the old process left behind.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startNodeService, type ServiceProcess } from '@agent-reach/testkit';
import { REGISTERED_MARK } from './exec-log.ts';

const ENTRY = fileURLToPath(new URL('./agent.ts', import.meta.url));

/** Waits (up to 1 s) until Linux shows the process stopped: a signal lands a little after kill(2). */
async function stopped(pid: number): Promise<void> {
  const until = Date.now() + 1000;
  while (Date.now() < until) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // The state is the field after the parenthesised command name.
    if (/\) [Tt] /.test(stat)) return;
    await sleep(1);
  }
}

/** Where the agents connect and log. */
export interface FleetSettings {
  registryUrl: string;
  routerUrl: string;
  redisUrl: string;
  /** Seeds of a Redis Cluster (REDIS_CLUSTER_NODES), or empty. */
  redisClusterNodes: string;
  execLog: string;
  maxConcurrency: number;
}

/** One process of an agent. */
export interface AgentInstance {
  agentId: string;
  instanceId: string;
  proc: ServiceProcess;
  spawnedAt: number;
  /** When the first registration of this process was seen (test clock); undefined until then. */
  readonly registeredAt: number | undefined;
}

/** A SIGKILL of an agent process, and when its replacement registered. */
export interface AgentKill {
  agent_id: string;
  pid: number;
  at: number;
  /** Registration of the replacement; undefined if it never came. */
  back_at?: number;
}

/** A SIGSTOP … SIGCONT of an agent process. */
export interface AgentPause {
  agent_id: string;
  pid: number;
  at: number;
  resumed_at: number;
  /** Whether registry-sync had marked it OFFLINE and taken its tasks back before SIGCONT. */
  taken_back: boolean;
}

/** Starts, kills, pauses and restarts the agent processes. */
export class ChaosFleet {
  private readonly current = new Map<string, AgentInstance>();
  private readonly retired: AgentInstance[] = [];
  private readonly generation = new Map<string, number>();
  private readonly killed: { old: AgentInstance; at: number; next: AgentInstance }[] = [];
  readonly pauses: AgentPause[] = [];

  constructor(private readonly settings: FleetSettings) {}

  /** Spawns a (new) process for `agentId`; resolves once spawned, not once registered. */
  async spawn(agentId: string): Promise<AgentInstance> {
    const gen = (this.generation.get(agentId) ?? 0) + 1;
    this.generation.set(agentId, gen);
    const instanceId = `${agentId}-i${gen}`;
    const seen: { registeredAt: number | undefined } = { registeredAt: undefined };
    const s = this.settings;
    const spawnedAt = Date.now();
    const proc = await startNodeService({
      name: instanceId,
      entry: ENTRY,
      env: {
        REACH_REGISTRY_URL: s.registryUrl,
        REACH_ROUTER_URL: s.routerUrl,
        REDIS_URL: s.redisUrl,
        ...(s.redisClusterNodes ? { REDIS_CLUSTER_NODES: s.redisClusterNodes } : {}),
        REACH_AGENT_ID: agentId,
        INSTANCE_ID: instanceId,
        EXEC_LOG: s.execLog,
        MAX_CONCURRENCY: String(s.maxConcurrency),
        LOG_LEVEL: 'warn',
      },
      onLine: (line) => {
        if (seen.registeredAt === undefined && line.startsWith(REGISTERED_MARK))
          seen.registeredAt = Date.now();
      },
    });
    const inst: AgentInstance = {
      agentId,
      instanceId,
      proc,
      spawnedAt,
      get registeredAt() {
        return seen.registeredAt;
      },
    };
    this.current.set(agentId, inst);
    return inst;
  }

  /** The live process of `agentId`. */
  instance(agentId: string): AgentInstance {
    const inst = this.current.get(agentId);
    if (!inst) throw new Error(`no process for agent ${agentId}`);
    return inst;
  }

  /** True once every current process has registered. */
  allRegistered(): boolean {
    return [...this.current.values()].every((i) => i.registeredAt !== undefined);
  }

  /** SIGKILLs the agent's process, waits for it to die, and starts its replacement. */
  async killAndRestart(agentId: string): Promise<void> {
    const old = this.instance(agentId);
    const at = Date.now();
    old.proc.kill('SIGKILL');
    await old.proc.exited;
    this.retired.push(old);
    const next = await this.spawn(agentId);
    this.killed.push({ old, at, next });
  }

  /** Every SIGKILL so far, with when each replacement registered. */
  kills(): AgentKill[] {
    return this.killed.map(({ old, at, next }) => ({
      agent_id: old.agentId,
      pid: old.proc.pid,
      at,
      ...(next.registeredAt !== undefined ? { back_at: next.registeredAt } : {}),
    }));
  }

  /**
   * SIGSTOPs the agent's process in the middle of work, so that it has results to deliver late;
   * {@link resume} sends SIGCONT. `openRuns` tells how many handler runs a process has started
   * and not ended (the execution log). A run seen open may end before the signal lands, so the
   * log is read again once the process is stopped — it writes nothing more then — and a stop
   * that caught no handler running is undone and tried again, until `timeoutMs` runs out (then
   * the last stop is kept as it is).
   */
  async pauseMidWork(
    agentId: string,
    openRuns: (pid: number) => Promise<number>,
    timeoutMs: number,
  ): Promise<AgentPause> {
    const inst = this.instance(agentId);
    const pid = inst.proc.pid;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while ((await openRuns(pid)) === 0 && Date.now() < deadline) await sleep(5);
      const at = Date.now();
      inst.proc.kill('SIGSTOP');
      await stopped(pid);
      if ((await openRuns(pid)) > 0 || Date.now() >= deadline) {
        const pause: AgentPause = { agent_id: agentId, pid, at, resumed_at: 0, taken_back: false };
        this.pauses.push(pause);
        return pause;
      }
      inst.proc.kill('SIGCONT');
    }
  }

  /** SIGCONTs a paused process. */
  resume(pause: AgentPause): void {
    // Taken before the signal: whatever the process does after SIGCONT is stamped later.
    pause.resumed_at = Date.now();
    this.instance(pause.agent_id).proc.kill('SIGCONT');
  }

  /** The last output lines of every process, for a failure message. */
  outputs(lines = 15): string {
    return [...this.retired, ...this.current.values()]
      .map(
        (i) =>
          `--- ${i.instanceId} (pid ${i.proc.pid})\n${i.proc.output().trimEnd().split('\n').slice(-lines).join('\n')}`,
      )
      .join('\n');
  }

  /** Stops every live process: SIGCONT (in case one is paused), then SIGTERM, SIGKILL after a grace. */
  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.current.values()].map(async (i) => {
        i.proc.kill('SIGCONT');
        await i.proc.stop('SIGTERM');
      }),
    );
  }
}
