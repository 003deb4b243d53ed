import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { rankCandidates, SnapshotHolder } from '@agent-reach/dispatch';
import { decodeSnapshot, reachKeys } from '@agent-reach/protocol';
import { median, round, summarize, type Summary } from '../stats.ts';
import { capabilityNames, prng, snapshotText, syntheticSnapshot } from './fleet.ts';

/** Figures for one fleet size. */
export interface RoutingFigures {
  agents: number;
  capabilities: number;
  /** Mean candidates (agents declaring the capability) per decision. */
  candidates: number;
  snapshotKiB: number;
  /** decodeSnapshot of the JSON text, ms (median of the loads). */
  decodeMs: number;
  /** SnapshotHolder.reload(): read, decode and index by capability, ms (median). */
  loadMs: number;
  /** Building the hash rings of every capability (lazily, on first use after a load), ms. */
  ringsMs: number;
  /** One routing decision (rankCandidates over the capability's agents and ring), µs. */
  decisionUs: Summary;
  /** Heap held by the SnapshotHolder with every ring built, MiB. */
  heapMiB: number;
}

const silent = pino({ level: 'silent' });

/** A stand-in for the router's connection: GET returns the next version of the snapshot. */
function fakeRedis(text: (version: number) => string): { redis: Redis; subscriber: Redis } {
  let version = 0;
  const redis = { get: () => Promise.resolve(text(++version)) } as unknown as Redis;
  const subscriber = { on: () => undefined, subscribe: () => Promise.resolve(), disconnect: () => undefined } as unknown as Redis;
  return { redis, subscriber };
}

let gcFn: (() => void) | undefined;
/** `gc()`, exposed at run time if node was not started with --expose-gc. */
function gc(): void {
  if (!gcFn) {
    setFlagsFromString('--expose_gc');
    gcFn = runInNewContext('gc') as () => void;
  }
  gcFn();
  gcFn();
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** Measures routing for one fleet size, the way the router uses the dispatch package. */
export async function measureRouting(agents: number, capabilities: number, decisions: number): Promise<RoutingFigures> {
  const snapshot = syntheticSnapshot(agents, capabilities);
  const base = snapshotText(snapshot, 1);
  const rest = base.slice(base.indexOf(','));
  const text = (v: number) => `{"version":${v}${rest}`;
  const caps = capabilityNames(capabilities);

  const decodes: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = text(i + 2);
    const t0 = process.hrtime.bigint();
    decodeSnapshot(t);
    decodes.push(ms(t0));
  }

  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const { redis, subscriber } = fakeRedis(text);
  const holder = new SnapshotHolder(redis, subscriber, reachKeys('bench'), 3_600_000, silent);
  const loads: number[] = [];
  const ringBuilds: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = process.hrtime.bigint();
    await holder.reload();
    loads.push(ms(t0));
    const t1 = process.hrtime.bigint();
    for (const cap of caps) holder.ringFor(cap);
    ringBuilds.push(ms(t1));
  }
  gc();
  const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;

  const rand = prng(7);
  const samples: number[] = [];
  let candidates = 0;
  const warmup = Math.min(2000, decisions);
  for (let i = 0; i < warmup + decisions; i++) {
    const cap = caps[Math.floor(rand() * caps.length)] as string;
    const taskId = `task-${i}-${Math.floor(rand() * 1e9).toString(36)}`;
    const t0 = process.hrtime.bigint();
    const ranked = rankCandidates(holder.agentsFor(cap), taskId, holder.ringFor(cap), holder.inflightOf);
    const us = Number(process.hrtime.bigint() - t0) / 1e3;
    if (i >= warmup) {
      samples.push(us);
      candidates += holder.agentsFor(cap).length;
    }
    // The router notes the inflight count each delivery returns: loads move between decisions.
    const first = ranked[0];
    if (first) {
      const next = holder.inflightOf(first.agent) + 1;
      holder.noteInflight(first.agent.agent_id, next >= first.agent.max_concurrency ? 0 : next);
    }
  }
  await holder.close();
  return {
    agents,
    capabilities,
    candidates: candidates / decisions,
    snapshotKiB: Buffer.byteLength(base) / 1024,
    decodeMs: median(decodes),
    loadMs: median(loads),
    ringsMs: median(ringBuilds),
    decisionUs: summarize(samples),
    heapMiB,
  };
}

/** The routing table printed by `npm run bench -- --routing`. */
export function routingTable(rows: readonly RoutingFigures[]): string {
  const head = ['agents', 'caps', 'cand/cap', 'JSON KiB', 'decode ms', 'load ms', 'rings ms', 'p50 µs', 'p99 µs', 'max µs', 'heap MiB'];
  const body = rows.map((r) => [
    String(r.agents),
    String(r.capabilities),
    r.candidates.toFixed(0),
    r.snapshotKiB.toFixed(0),
    r.decodeMs.toFixed(2),
    r.loadMs.toFixed(2),
    r.ringsMs.toFixed(1),
    r.decisionUs.p50.toFixed(1),
    r.decisionUs.p99.toFixed(1),
    r.decisionUs.max.toFixed(0),
    r.heapMiB.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** Runs the routing microbenchmark over 100, 1,000 and 10,000 agents; returns the JSON line. */
export async function runRoutingBench(write: (line: string) => void, quick: boolean): Promise<string> {
  const rows: RoutingFigures[] = [];
  for (const agents of [100, 1000, 10_000]) rows.push(await measureRouting(agents, 100, quick ? 2000 : 20_000));
  write(`routing decision: rankCandidates(holder.agentsFor(cap), task_id, holder.ringFor(cap), holder.inflightOf), 100 capabilities`);
  write(routingTable(rows));
  const json: Record<string, number> = {};
  for (const r of rows) {
    json[`decision_p50_us_${r.agents}`] = round(r.decisionUs.p50);
    json[`decision_p99_us_${r.agents}`] = round(r.decisionUs.p99);
    json[`snapshot_load_ms_${r.agents}`] = round(r.loadMs);
    json[`heap_mib_${r.agents}`] = round(r.heapMiB);
  }
  return JSON.stringify(json);
}
