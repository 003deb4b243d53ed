import { connect } from 'node:net';
import type { RelayMetrics } from './metrics.ts';
import type { ServedAgent } from './served-agent.ts';

/** What the prober needs. */
export interface ProberOptions {
  /** How often each endpoint gets a TCP connect (REACH_ENDPOINT_PROBE_MS). */
  probeIntervalMs: number;
  /** How often each endpoint gets its protocol's full check (REACH_ENDPOINT_CHECK_MS). */
  checkIntervalMs: number;
  metrics: RelayMetrics;
  agents(): Iterable<ServedAgent>;
}

/**
 * The endpoint agents' liveness, which is theirs and not the relay's: a TCP connect every probe
 * interval (one per host and port, however many agents share it) and a full check (health URL,
 * AgentCard, MCP ping) every check interval. A refused connect makes every agent of that address
 * unreachable at once (ServedAgent.setReachable reports it); an answer makes them reachable.
 */
export class Prober {
  #timer?: NodeJS.Timeout;
  #running = false;
  readonly #lastFull = new Map<ServedAgent, number>();
  readonly #fullOk = new Map<ServedAgent, boolean>();

  constructor(private readonly o: ProberOptions) {}

  start(): void {
    this.#timer = setInterval(() => void this.round(), this.o.probeIntervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One round: skipped while the last one is still running. */
  async round(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      const byAddress = new Map<string, ServedAgent[]>();
      for (const a of this.o.agents()) {
        if (a.state !== 'serving') continue;
        const key = addressOf(a.entry.record.url);
        byAddress.set(key, [...(byAddress.get(key) ?? []), a]);
      }
      const timeoutMs = Math.min(1000, Math.max(50, this.o.probeIntervalMs));
      await Promise.all(
        [...byAddress].map(async ([address, agents]) => {
          const up = await tcpConnect(address, timeoutMs);
          this.o.metrics.probes.inc({ kind: 'tcp', result: up ? 'ok' : 'fail' });
          await Promise.all(agents.map((a) => this.#settle(a, up)));
        }),
      );
      for (const a of this.#lastFull.keys()) if (a.state === 'stopped') this.#forget(a);
    } finally {
      this.#running = false;
    }
  }

  async #settle(agent: ServedAgent, tcpUp: boolean): Promise<void> {
    if (!tcpUp) {
      agent.setReachable(false);
      return;
    }
    const now = Date.now();
    if (now - (this.#lastFull.get(agent) ?? 0) >= this.o.checkIntervalMs) {
      this.#lastFull.set(agent, now);
      const ok = await agent.client
        .probe(AbortSignal.timeout(Math.min(3000, this.o.checkIntervalMs)))
        .catch(() => false);
      this.o.metrics.probes.inc({ kind: 'full', result: ok ? 'ok' : 'fail' });
      this.#fullOk.set(agent, ok);
    }
    agent.setReachable(this.#fullOk.get(agent) ?? true);
  }

  #forget(agent: ServedAgent): void {
    this.#lastFull.delete(agent);
    this.#fullOk.delete(agent);
  }
}

/** `host:port` of a URL, with the scheme's default port. */
export function addressOf(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return `${host}|${port}`;
}

/** True when a TCP connection to `address` opens within `timeoutMs`. */
function tcpConnect(address: string, timeoutMs: number): Promise<boolean> {
  const [host, port] = address.split('|') as [string, string];
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
