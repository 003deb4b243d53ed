import type { Logger } from 'pino';
import { PROBE_CAPABILITY, type FullAgentView } from '@agent-reach/protocol';
import type { Delivery } from '@agent-reach/dispatch';

/** Probe deliveries one pass has in flight at once. */
const PROBES_IN_FLIGHT = 16;

/** What a prober needs. */
export interface ProberOptions {
  delivery: Delivery;
  intervalMs: number;
  logger: Logger;
}

/**
 * Sends each live agent a small probe task through its inbox every interval: the real path, so
 * an agent whose heartbeat thread lives while its task loop is stuck leaves the probe unread,
 * and the in-flight sweep marks it SUSPECT. Agents with no free slot are not probed (their
 * slots show consumption already). A probe's task_id (`probe:<agent>:<time>`) is only a name:
 * callers choose task_ids too, so the acks side and the sweeper know a probe by the mark the
 * deliver script puts on its pending entry (`|probe`), never by its id.
 */
export class Prober {
  private readonly lastProbe = new Map<string, number>();
  private readonly log: Logger;

  constructor(private readonly o: ProberOptions) {
    this.log = o.logger.child({ module: 'prober' });
  }

  /**
   * Probes the agents due for one. `agents` is every registered agent: one no longer among them
   * (deregistered, or its record expired) is forgotten, so the map holds the fleet, not its history.
   */
  async probe(agents: readonly FullAgentView[], now: number): Promise<number> {
    if (this.lastProbe.size > agents.length) {
      const registered = new Set(agents.map((a) => a.agent_id));
      for (const id of this.lastProbe.keys()) if (!registered.has(id)) this.lastProbe.delete(id);
    }
    const due: FullAgentView[] = [];
    for (const agent of agents) {
      // DEGRADED agents too: passed probes are how they come back.
      if (agent.status !== 'HEALTHY' && agent.status !== 'SUSPECT' && agent.status !== 'DEGRADED')
        continue;
      if (agent.inflight >= agent.max_concurrency) continue;
      const last = this.lastProbe.get(agent.agent_id);
      if (last === undefined) {
        // A new agent is probed one interval after it is first seen.
        this.lastProbe.set(agent.agent_id, now);
        continue;
      }
      if (now - last < this.o.intervalMs) continue;
      this.lastProbe.set(agent.agent_id, now);
      due.push(agent);
    }
    // A few deliveries in flight at once: a thousand probes due in one pass take a few round
    // trips' time, not a thousand.
    let sent = 0;
    let next = 0;
    const lane = async () => {
      for (let agent = due[next++]; agent; agent = due[next++])
        if (await this.send(agent, now)) sent++;
    };
    await Promise.all(Array.from({ length: Math.min(PROBES_IN_FLIGHT, due.length) }, lane));
    return sent;
  }

  private async send(agent: FullAgentView, now: number): Promise<boolean> {
    const res = await this.o.delivery.deliver(
      agent,
      {
        task_id: `probe:${agent.agent_id}:${now}`,
        capability: PROBE_CAPABILITY,
        payload: JSON.stringify({ probe_at: now }),
        attempt: 1,
        trace_id: '',
        callback_topic: '',
        deadline_ms: 0,
      },
      { probe: true },
    );
    if (!res.ok)
      this.log.debug({ agent_id: agent.agent_id, refusal: res.refusal }, 'probe not delivered');
    return res.ok;
  }
}
