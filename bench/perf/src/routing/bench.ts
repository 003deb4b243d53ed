import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import {
  decide,
  HashRing,
  rankCandidates,
  SnapshotHolder,
  type RankedAgent,
} from '@agent-reach/dispatch';
import { decodeSnapshot, reachKeys, type SnapshotAgent } from '@agent-reach/protocol';
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
  /** Building the hash rings of every capability after a reload (median; a ring is kept while its membership is), ms. */
  ringsMs: number;
  /** Building the hash rings of every capability from nothing (the first load), ms. */
  ringsColdMs: number;
  /** One routing decision as the router makes it: the best push candidates it will try, µs. */
  decisionUs: Summary;
  /** Ordering every candidate (rankCandidates: the route explanation, retries, the routing lab), µs. */
  fullRankUs: Summary;
  /** Heap held by the SnapshotHolder with every ring built, MiB. */
  heapMiB: number;
  /** One agent joins a capability: its ring merged from the one before, ms (median over capabilities). */
  ringJoinMs: number;
  /** The same ring built from nothing, ms (median). */
  ringBuildMs: number;
}

const silent = pino({ level: 'silent' });

/** A stand-in for the router's connection: GET returns the next version of the snapshot. */
function fakeRedis(text: (version: number) => string): { redis: Redis; subscriber: Redis } {
  let version = 0;
  const redis = { get: () => Promise.resolve(text(++version)) } as unknown as Redis;
  const subscriber = {
    on: () => undefined,
    subscribe: () => Promise.resolve(),
    disconnect: () => undefined,
  } as unknown as Redis;
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
export async function measureRouting(
  agents: number,
  capabilities: number,
  decisionCount: number,
): Promise<RoutingFigures> {
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
  const holder = new SnapshotHolder({
    redis,
    subscriber,
    keys: reachKeys('bench'),
    intervalMs: 3_600_000,
    logger: silent,
  });
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

  const { joinMs, buildMs } = ringAfterJoin(holder, caps);
  const routed = await decisions(holder, caps, decisionCount, (agents, taskId, cap) =>
    routerChoice(holder, agents, taskId, cap),
  );
  const ranked = await decisions(holder, caps, decisionCount, (agents, taskId, cap) =>
    rankCandidates(agents, taskId, holder.ringFor(cap), holder.inflightOf),
  );
  await holder.close();
  return {
    agents,
    capabilities,
    candidates: routed.candidates,
    snapshotKiB: Buffer.byteLength(base) / 1024,
    decodeMs: median(decodes),
    loadMs: median(loads),
    ringsMs: median(ringBuilds.slice(1)),
    ringsColdMs: ringBuilds[0] ?? NaN,
    decisionUs: summarize(routed.samples),
    fullRankUs: summarize(ranked.samples),
    heapMiB,
    ringJoinMs: joinMs,
    ringBuildMs: buildMs,
  };
}

/** For each of up to 20 capabilities: its ring when one agent joins, merged from the ring before and built from nothing. */
function ringAfterJoin(
  holder: SnapshotHolder,
  caps: readonly string[],
): { joinMs: number; buildMs: number } {
  const joins: number[] = [];
  const builds: number[] = [];
  for (const cap of caps.slice(0, 20)) {
    const ids = holder.agentsFor(cap).map((a) => a.agent_id);
    const before = new HashRing(ids);
    const after = [...ids, `joined-${cap}`];
    const t0 = process.hrtime.bigint();
    new HashRing(after, undefined, before);
    joins.push(ms(t0));
    const t1 = process.hrtime.bigint();
    new HashRing(after);
    builds.push(ms(t1));
  }
  return { joinMs: median(joins), buildMs: median(builds) };
}

/** Candidates the router tries before it queues (REACH_MAX_CANDIDATES' default), and the runner-up it records. */
const ROUTER_PICKS = 3 + 1;

/** The router's decision: `decide()` with its defaults, then only the best push candidates it tries. */
function routerChoice(
  holder: SnapshotHolder,
  agents: readonly SnapshotAgent[],
  taskId: string,
  capability: string,
): RankedAgent[] {
  return decide(agents, { taskId, capability }, holder.ringFor(capability), holder.inflightOf).best(
    ROUTER_PICKS,
    (a) => a.channel !== 'pull',
  );
}

type Choose = (
  agents: readonly SnapshotAgent[],
  taskId: string,
  capability: string,
) => RankedAgent[];

/**
 * Times `count` calls of `choose` over random capabilities and task_ids, after a warm-up, from a
 * freshly loaded snapshot; also gives the mean number of agents per decision. The router notes
 * the inflight count each delivery returns, so loads move between decisions as in the router.
 */
async function decisions(
  holder: SnapshotHolder,
  caps: readonly string[],
  count: number,
  choose: Choose,
): Promise<{ samples: number[]; candidates: number }> {
  await holder.reload();
  const rand = prng(7);
  const samples: number[] = [];
  let candidates = 0;
  const warmup = Math.min(2000, count);
  for (let i = 0; i < warmup + count; i++) {
    const cap = caps[Math.floor(rand() * caps.length)] as string;
    const taskId = `task-${i}-${Math.floor(rand() * 1e9).toString(36)}`;
    const t0 = process.hrtime.bigint();
    const ranked = choose(holder.agentsFor(cap), taskId, cap);
    const us = Number(process.hrtime.bigint() - t0) / 1e3;
    if (i >= warmup) {
      samples.push(us);
      candidates += holder.agentsFor(cap).length;
    }
    const first = ranked[0];
    if (first) {
      const next = holder.inflightOf(first.agent) + 1;
      holder.noteInflight(first.agent.agent_id, next >= first.agent.max_concurrency ? 0 : next);
    }
  }
  return { samples, candidates: candidates / count };
}

/** The routing table printed by `npm run bench -- --routing`. */
export function routingTable(rows: readonly RoutingFigures[]): string {
  const head = [
    'agents',
    'caps',
    'cand/cap',
    'JSON KiB',
    'decode ms',
    'load ms',
    'rings ms',
    'p50 µs',
    'p99 µs',
    'max µs',
    'heap MiB',
  ];
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
export async function runRoutingBench(
  write: (line: string) => void,
  quick: boolean,
): Promise<string> {
  const rows: RoutingFigures[] = [];
  for (const agents of [100, 1000, 10_000])
    rows.push(await measureRouting(agents, 100, quick ? 2000 : 20_000));
  write(
    `routing decision: decide(holder.agentsFor(cap), { task_id, capability }, holder.ringFor(cap), holder.inflightOf).best(${ROUTER_PICKS}, push), 100 capabilities`,
  );
  write(routingTable(rows));
  const each = (f: (r: RoutingFigures) => string) =>
    rows.map((r) => `${r.agents}: ${f(r)}`).join(' · ');
  write(
    `every candidate ordered (rankCandidates), p50/p99 µs: ${each((r) => `${r.fullRankUs.p50.toFixed(1)}/${r.fullRankUs.p99.toFixed(1)}`)}`,
  );
  write(
    `hash rings of all capabilities built from nothing (first load), ms: ${each((r) => r.ringsColdMs.toFixed(1))}`,
  );
  write(
    `one agent joins a capability: its ring merged from the one before / built from nothing, ms: ${each((r) => `${r.ringJoinMs.toFixed(2)}/${r.ringBuildMs.toFixed(2)}`)}`,
  );
  const json: Record<string, number> = {};
  for (const r of rows) {
    json[`decision_p50_us_${r.agents}`] = round(r.decisionUs.p50);
    json[`decision_p99_us_${r.agents}`] = round(r.decisionUs.p99);
    json[`snapshot_load_ms_${r.agents}`] = round(r.loadMs);
    json[`heap_mib_${r.agents}`] = round(r.heapMiB);
    json[`full_rank_p50_us_${r.agents}`] = round(r.fullRankUs.p50);
    json[`full_rank_p99_us_${r.agents}`] = round(r.fullRankUs.p99);
    json[`rings_cold_ms_${r.agents}`] = round(r.ringsColdMs);
    json[`ring_join_ms_${r.agents}`] = round(r.ringJoinMs);
  }
  return JSON.stringify(json);
}
