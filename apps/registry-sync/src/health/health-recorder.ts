import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  HealthOutcome,
  type AgentHealthCheck,
  type HealthOutcomeName,
  type ReachKeys,
} from '@agent-reach/protocol';
import type { FleetEventLog } from '@agent-reach/dispatch';
import { outcomesScript } from './commands/outcomes.ts';

/** What the recorder needs to know. */
export interface HealthRecorderSettings {
  /** Outcomes kept per agent. */
  healthWindow: number;
  /** Failed deep probes in a row that make an agent SUSPECT. */
  probeFailures: number;
}

/** How long an outcome waits for others before they are written together. */
const FLUSH_MS = 200;

/** What a health recorder needs. */
export interface HealthRecorderOptions {
  redis: RedisClient;
  keys: ReachKeys;
  fleet: FleetEventLog;
  settings: HealthRecorderSettings;
  logger: Logger;
  /**
   * Agents' status changed (routers must learn of it soon).
   * @default () => {}
   */
  onStatusChange?: (agentIds: readonly string[]) => void;
}

/**
 * Records agents' outcomes (completions, failures, lease lapses, receipt timeouts, probes) into
 * their health windows. `record()` is synchronous and cheap, so the acks' hot path and the sweeps
 * call it freely: outcomes are buffered per agent and written 200 ms after the first one of a
 * batch, one script call per agent in one pipeline. The timer is armed by an outcome, not kept
 * running: an idle instance does not wake five times a second to find nothing. An outcome lost
 * with a crashing process only makes a health score a little less informed; no task depends on it.
 */
export class HealthRecorder {
  private readonly onStatusChange: (agentIds: readonly string[]) => void;
  readonly #buffer = new Map<string, string>();
  readonly #checks = new Map<string, AgentHealthCheck>();
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #flushing: Promise<void> = Promise.resolve();

  constructor(private readonly o: HealthRecorderOptions) {
    this.onStatusChange = o.onStatusChange ?? (() => {});
    this.#log = o.logger.child({ module: 'health' });
  }

  /**
   * Notes one outcome of an agent (written with the next flush). A probe's outcome may bring the
   * health check's answer, kept with the agent (the latest one of a flush).
   */
  record(agentId: string, outcome: HealthOutcomeName, check?: AgentHealthCheck): void {
    this.#buffer.set(agentId, (this.#buffer.get(agentId) ?? '') + HealthOutcome[outcome]);
    if (check) this.#checks.set(agentId, check);
    this.#arm();
  }

  /** Starts flushing: outcomes recorded before it are written 200 ms from now. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#arm();
  }

  /** Writes what is buffered; never rejects. Flushes run one at a time. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    this.#started = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** Schedules one flush FLUSH_MS from now, unless one is scheduled or nothing waits. */
  #arm(): void {
    if (!this.#started || this.#timer || this.#buffer.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, FLUSH_MS);
    this.#timer.unref();
  }

  async #write(): Promise<void> {
    if (this.#buffer.size === 0) return;
    const batch = [...this.#buffer];
    const checks = new Map(this.#checks);
    this.#buffer.clear();
    this.#checks.clear();
    try {
      const pipeline = slotPipeline(this.o.redis);
      const calls = batch.map(([agentId, letters]) => ({
        agentId,
        keys: { agent: this.o.keys.agent(agentId) },
        args: {
          letters,
          window: this.o.settings.healthWindow,
          probeFailures: this.o.settings.probeFailures,
          healthCheck: checks.has(agentId) ? JSON.stringify(checks.get(agentId)) : '',
        },
      }));
      for (const call of calls) pipeline.add(call.keys.agent, (p) => outcomesScript.queue(p, call));
      // Probe outcomes counted fleet-wide (`reach_store_counter{name="probes_failed"}`).
      const probes = { probes_passed: 0, probes_failed: 0 };
      for (const [, letters] of batch)
        for (const c of letters) {
          if (c === HealthOutcome.probeOk) probes.probes_passed++;
          else if (c === HealthOutcome.probeFailed) probes.probes_failed++;
        }
      const stats = this.o.keys.stats();
      for (const [name, n] of Object.entries(probes))
        if (n > 0) pipeline.add(stats, (p) => p.hincrby(stats, name, n));
      const replies = await pipeline.exec();
      const changed: string[] = [];
      calls.forEach((call, i) => {
        const { agentId } = call;
        const [err, raw] = replies[i] ?? [new Error('pipeline: no reply'), null];
        if (err) {
          this.#log.warn({ err, agent_id: agentId }, 'outcomes not recorded');
          return;
        }
        const reply = outcomesScript.decode(raw, call.args);
        if (reply.suspected || reply.cleared) changed.push(agentId);
        if (reply.suspected) {
          this.#log.warn(
            { agent_id: agentId, failures: this.o.settings.probeFailures },
            'deep probes failing; agent SUSPECT',
          );
          this.o.fleet.append({
            kind: 'status',
            agent_id: agentId,
            from: reply.previous,
            to: 'SUSPECT',
            reason: `${this.o.settings.probeFailures} failed probes in a row`,
          });
        }
        if (reply.cleared) {
          this.#log.info({ agent_id: agentId }, 'probe passed; agent no longer unwell');
          this.o.fleet.append({
            kind: 'status',
            agent_id: agentId,
            from: 'SUSPECT',
            reason: 'probe passed',
          });
        }
      });
      if (changed.length > 0) this.onStatusChange(changed);
    } catch (err: unknown) {
      this.#log.warn({ err }, 'outcomes not recorded');
    }
  }
}
