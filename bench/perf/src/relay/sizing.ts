/** What the fleet run measured, for sizing a larger fleet. */
export interface FleetFigures {
  /** Endpoint agents the relay served. */
  agents: number;
  /** The relay's idle CPU per agent, cores (probes, full checks, sweeps, heartbeats, probe tasks). */
  relayIdleCorePerAgent: number;
  /** The relay's CPU per task, ms, its idle cost taken out. */
  relayMsPerTask: number;
  /** The relay's resident memory with no agent, MiB. */
  rssAtZeroMiB: number;
  /** The relay's resident memory with {@link agents} agents, MiB. */
  rssMiB: number;
}

/** The fleet sized. */
export const FLEET_AGENTS = 10_000;
/**
 * A relay is planned at half a core: it is one Node thread, and the other half is headroom for
 * bursts, garbage collection and a relay's share when another one leaves.
 */
export const CORE_BUDGET = 0.5;
/** A relay's resident memory is planned below this (the target of the fleet run). */
export const RSS_BUDGET_MIB = 300;
/** The fleet's task rates sized for, tasks/s over all its agents; the first is the headline. */
export const FLEET_RATES = [1000, 0, 5000] as const;

/** Relays needed for `agents` agents at `rate` tasks/s, and what bounds it. */
export function relaysFor(
  f: FleetFigures,
  agents: number,
  rate: number,
): { relays: number; byCpu: number; byMemory: number; cores: number } {
  const cores = agents * f.relayIdleCorePerAgent + (rate * f.relayMsPerTask) / 1000;
  const perAgentMiB = Math.max(0, f.rssMiB - f.rssAtZeroMiB) / f.agents;
  const byCpu = Math.ceil(cores / CORE_BUDGET);
  const byMemory = Math.ceil((agents * perAgentMiB) / (RSS_BUDGET_MIB - f.rssAtZeroMiB));
  return { relays: Math.max(1, byCpu, byMemory), byCpu, byMemory, cores };
}

/** How many relays {@link FLEET_AGENTS} endpoint agents need, as printed lines; `relays` at the first rate. */
export function fleetSizing(f: FleetFigures): { relays: number; lines: string[] } {
  const lines = [
    `relays for ${FLEET_AGENTS.toLocaleString('en')} endpoint agents (each relay at most ${CORE_BUDGET} core and ${RSS_BUDGET_MIB} MiB; ` +
      `measured: ${(f.relayIdleCorePerAgent * 1e6).toFixed(1)} µs CPU per agent per second idle, ${f.relayMsPerTask.toFixed(3)} CPU-ms per task, ` +
      `${((Math.max(0, f.rssMiB - f.rssAtZeroMiB) / f.agents) * 1024).toFixed(0)} KiB per agent over ${f.rssAtZeroMiB.toFixed(0)} MiB):`,
  ];
  let headline = NaN;
  for (const rate of FLEET_RATES) {
    const r = relaysFor(f, FLEET_AGENTS, rate);
    if (Number.isNaN(headline)) headline = r.relays;
    lines.push(
      `  at ${rate.toLocaleString('en')} tasks/s over the fleet: ${r.relays} relay(s) — ${r.cores.toFixed(2)} cores in all (${r.byCpu} by CPU), ${r.byMemory} by memory`,
    );
  }
  return { relays: headline, lines };
}
