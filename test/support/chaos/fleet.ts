/**
 * The chaos test's agents: one process per agent_id (test/support/chaos/agent.ts), killed,
 * paused and restarted by pid. A restart keeps the agent_id and takes a new instance_id, so the
 * registry gives it a higher epoch and fences whatever the old process left behind.
 */
import { fileURLToPath } from 'node:url';
import { startNodeService, type ServiceProcess } from '@agent-reach/testkit';
import { REGISTERED_MARK } from './exec-log.ts';

const ENTRY = fileURLToPath(new URL('./agent.ts', import.meta.url));

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
        REGISTRY_URL: s.registryUrl,
        ROUTER_URL: s.routerUrl,
        REDIS_URL: s.redisUrl,
        ...(s.redisClusterNodes ? { REDIS_CLUSTER_NODES: s.redisClusterNodes } : {}),
        AGENT_ID: agentId,
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

  /** SIGSTOPs the agent's process; {@link resume} sends SIGCONT. */
  pause(agentId: string): AgentPause {
    const inst = this.instance(agentId);
    const pause: AgentPause = {
      agent_id: agentId,
      pid: inst.proc.pid,
      at: Date.now(),
      resumed_at: 0,
      taken_back: false,
    };
    inst.proc.kill('SIGSTOP');
    this.pauses.push(pause);
    return pause;
  }

  /** SIGCONTs a paused process. */
  resume(pause: AgentPause): void {
    this.instance(pause.agent_id).proc.kill('SIGCONT');
    pause.resumed_at = Date.now();
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
