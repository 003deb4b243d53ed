import { describe, expect, it } from 'vitest';
import type { AgentStatus, SnapshotAgent } from '@agent-reach/protocol';
import { hash32 } from './hash.ts';
import { HashRing } from './hash-ring.ts';
import { decide, type RouteRequest } from './policy.ts';
import { mulberry32 } from './prng.ts';

/**
 * The policy as it was before decisions were ranked lazily (string-owner ring, full sort, one
 * ring walk per tie), kept here as the oracle the faster code must match on random fleets.
 */
class ReferenceRing {
  private readonly points: Uint32Array;
  private readonly owners: string[];
  constructor(agentIds: readonly string[], virtualNodes = 128) {
    const nodes: { point: number; owner: string }[] = [];
    for (const id of agentIds)
      for (let v = 0; v < virtualNodes; v++) nodes.push({ point: hash32(`${id}#${v}`), owner: id });
    nodes.sort((a, b) => a.point - b.point || (a.owner < b.owner ? -1 : 1));
    this.points = Uint32Array.from(nodes, (n) => n.point);
    this.owners = nodes.map((n) => n.owner);
  }
  order(taskId: string, among: ReadonlySet<string>): string[] {
    const out: string[] = [];
    const n = this.points.length;
    if (n === 0 || among.size === 0) return out;
    const seen = new Set<string>();
    const point = hash32(taskId);
    let i = this.points.findIndex((p) => p >= point);
    if (i < 0) i = n;
    for (let step = 0; step < n && out.length < among.size; step++, i++) {
      const owner = this.owners[i % n]!;
      if (among.has(owner) && !seen.has(owner)) {
        seen.add(owner);
        out.push(owner);
      }
    }
    return out;
  }
}

interface RefCandidate {
  agent: SnapshotAgent;
  load: number;
  score: number;
  excluded?: string;
}

function referenceDecide(
  agents: readonly SnapshotAgent[],
  req: RouteRequest,
  ring: ReferenceRing,
  now: number,
) {
  const s = { watermark: 0.85, slowFactor: 1.5, slowPenalty: 0.25, maxBias: 0.05 };
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  const values = agents
    .map((a) => a.ewma_ms?.[req.capability])
    .filter((v): v is number => typeof v === 'number' && v > 0);
  const mean = values.length >= 2 ? values.reduce((a, b) => a + b, 0) / values.length : undefined;
  const all: RefCandidate[] = agents.map((agent) => {
    const load = agent.inflight / Math.max(1, agent.max_concurrency);
    const ewma = agent.ewma_ms?.[req.capability];
    const slow =
      mean !== undefined && ewma !== undefined && ewma > s.slowFactor * mean ? s.slowPenalty : 0;
    const bias =
      clamp(0.01 * (agent.priority ?? 0), 0, s.maxBias) +
      clamp(s.maxBias * ((agent.weight ?? 1) - 1), -s.maxBias, s.maxBias);
    return { agent, load, score: load + slow - bias };
  });
  const exclude = (c: RefCandidate, why: string) => (c.excluded ??= why);
  const open = () => all.filter((c) => !c.excluded);
  const hasAll = (a: SnapshotAgent, tags: readonly string[]) =>
    tags.every((t) => [...a.capabilities, ...(a.tags ?? [])].includes(t));
  for (const c of all) {
    const a = c.agent;
    if (a.status === 'OFFLINE') exclude(c, 'offline');
    else if (a.status === 'STARTING') exclude(c, 'starting');
    else if (a.status === 'DRAINING') exclude(c, 'draining');
    else if (a.unreachable) exclude(c, 'unreachable');
    else if (a.dependency_down) exclude(c, 'dependency_down');
    else if (a.ejected_until && a.ejected_until > now) exclude(c, 'ejected');
    else if (!hasAll(a, req.tags ?? [])) exclude(c, 'missing_tags');
  }
  if (req.region) {
    const inRegion = open().filter((c) => c.agent.region === req.region);
    if (req.regionPolicy === 'strict' || inRegion.length > 0)
      for (const c of open()) if (c.agent.region !== req.region) exclude(c, 'region');
  }
  for (const c of open()) {
    if (c.agent.observe) exclude(c, 'observing');
    else if (req.exclude?.has(c.agent.agent_id)) exclude(c, 'on_trace');
    else if (c.agent.inflight >= c.agent.max_concurrency) exclude(c, 'full');
  }
  if (open().some((c) => c.agent.status === 'HEALTHY'))
    for (const c of open()) if (c.agent.status === 'SUSPECT') exclude(c, 'suspect');
  if (open().some((c) => c.load < s.watermark))
    for (const c of open()) if (c.load >= s.watermark) exclude(c, 'watermark');
  const sorted = [...open()].sort((a, b) => a.score - b.score);
  let ranked: RefCandidate[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i + 1;
    while (j < sorted.length && sorted[j]!.score - sorted[i]!.score < 1e-9) j++;
    const tie = sorted.slice(i, j);
    if (tie.length === 1) ranked.push(tie[0]!);
    else {
      const byId = new Map(tie.map((c) => [c.agent.agent_id, c]));
      for (const id of ring.order(req.taskId, new Set(byId.keys()))) ranked.push(byId.get(id)!);
    }
    i = j;
  }
  if (req.avoid && ranked.length > 1)
    ranked = [
      ...ranked.filter((c) => c.agent.agent_id !== req.avoid),
      ...ranked.filter((c) => c.agent.agent_id === req.avoid),
    ];
  const sticky = req.sessionAgent
    ? ranked.find((c) => c.agent.agent_id === req.sessionAgent)
    : undefined;
  if (sticky && sticky.agent.status === 'HEALTHY' && sticky.load < s.watermark)
    ranked = [sticky, ...ranked.filter((c) => c !== sticky)];
  return { ranked, all };
}

const STATUSES: AgentStatus[] = [
  'HEALTHY',
  'HEALTHY',
  'HEALTHY',
  'HEALTHY',
  'SUSPECT',
  'OFFLINE',
  'STARTING',
  'DRAINING',
];
// Weights 1 ± a few 1e-11 tie within 1e-9; 1 + 2e-8 lands right at the tie bound.
const WEIGHTS = [undefined, undefined, undefined, 1 + 1e-11, 1 - 3e-11, 1 + 2e-8, 1.4, 0.5];

/** A random fleet with many equal loads, every filter in play, and a random request for it. */
function randomCase(
  rand: () => number,
  now: number,
): { agents: SnapshotAgent[]; req: RouteRequest } {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const n = 1 + Math.floor(rand() * (rand() < 0.2 ? 150 : 40));
  // Mostly a few load ratios (many ties); sometimes so many that ranking stops listing them one by one.
  const wide = rand() < 0.25;
  const agents: SnapshotAgent[] = [];
  for (let i = 0; i < n; i++) {
    const max = wide ? 1 + Math.floor(rand() * 97) : pick([1, 2, 4, 8]);
    const weight = pick(WEIGHTS);
    agents.push({
      agent_id: `a-${i}-${Math.floor(rand() * 1e6).toString(36)}`,
      instance_id: 'i',
      epoch: 1,
      status: pick(STATUSES),
      capabilities: rand() < 0.1 ? ['cap', 'gpu'] : ['cap'],
      max_concurrency: max,
      inflight: rand() < 0.4 ? 0 : Math.floor(rand() * (max + 1)),
      region: pick(['eu', 'us']),
      channel: rand() < 0.2 ? 'pull' : 'push',
      lease_age_ms: 0,
      ...(rand() < 0.05 ? { ejected_until: now + (rand() < 0.5 ? 1000 : -1000) } : {}),
      ...(rand() < 0.1 ? { tags: ['a100'] } : {}),
      ...(rand() < 0.05 ? { observe: true } : {}),
      ...(rand() < 0.1 ? { priority: Math.floor(rand() * 10) } : {}),
      ...(weight !== undefined ? { weight } : {}),
      ...(rand() < 0.3 ? { ewma_ms: { cap: pick([100, 120, 400]) } } : {}),
    });
  }
  const someId = () => pick(agents).agent_id;
  const req: RouteRequest = {
    taskId: `task-${Math.floor(rand() * 1e9)}`,
    capability: 'cap',
    ...(rand() < 0.1 ? { tags: pick([['gpu'], ['a100'], ['gpu', 'a100']]) } : {}),
    ...(rand() < 0.3
      ? {
          region: pick(['eu', 'us', 'ap']),
          regionPolicy: rand() < 0.3 ? ('strict' as const) : ('prefer' as const),
        }
      : {}),
    ...(rand() < 0.3 ? { sessionAgent: someId() } : {}),
    ...(rand() < 0.2 ? { exclude: new Set([someId(), someId()]) } : {}),
    ...(rand() < 0.3 ? { avoid: someId() } : {}),
  };
  return { agents, req };
}

const view = (c: { agent: SnapshotAgent; load: number; score: number; excluded?: string }) => [
  c.agent.agent_id,
  c.load,
  c.score,
  c.excluded,
];
const isPush = (a: SnapshotAgent) => a.channel !== 'pull';
const isPull = (a: SnapshotAgent) => a.channel === 'pull';

describe('decide matches the reference policy on random fleets', () => {
  const now = Date.now();

  it('ranks, scores and explains every agent the same way', () => {
    const rand = mulberry32(11);
    for (let round = 0; round < 300; round++) {
      const { agents, req } = randomCase(rand, now);
      const ids = agents.map((a) => a.agent_id);
      const got = decide(agents, req, new HashRing(ids), (a) => a.inflight, undefined, now);
      const want = referenceDecide(agents, req, new ReferenceRing(ids), now);
      expect(got.ranked.map((c) => c.agent.agent_id)).toEqual(
        want.ranked.map((c) => c.agent.agent_id),
      );
      expect(got.all.map(view)).toEqual(want.all.map(view));
    }
  });

  it('orders a capability with more distinct scores than ties are tracked one by one', () => {
    const agents = Array.from({ length: 150 }, (_, i) =>
      plain(`w${i}`, i % 50 === 0 ? 0 : 1 + (i % 7)),
    );
    for (const [i, a] of agents.entries()) a.max_concurrency = 8 + i;
    const ids = agents.map((a) => a.agent_id);
    const got = decide(agents, { taskId: 't-wide', capability: 'cap' }, new HashRing(ids));
    expect(new Set(got.ranked.map((c) => c.score)).size).toBeGreaterThan(64);
    const want = referenceDecide(
      agents,
      { taskId: 't-wide', capability: 'cap' },
      new ReferenceRing(ids),
      Date.now(),
    );
    expect(got.ranked.map((c) => c.agent.agent_id)).toEqual(
      want.ranked.map((c) => c.agent.agent_id),
    );
  });

  it('best(k, where) is the prefix of the full ordering, filtered, for every k', () => {
    const rand = mulberry32(23);
    for (let round = 0; round < 400; round++) {
      const { agents, req } = randomCase(rand, now);
      const ring = new HashRing(agents.map((a) => a.agent_id));
      const full = decide(agents, req, ring, (a) => a.inflight, undefined, now).ranked;
      for (const where of [undefined, isPush, isPull]) {
        const expected = where ? full.filter((c) => where(c.agent)) : full;
        for (const k of [0, 1, 2, 3, 4, 7, 1000]) {
          // A fresh decision each time: best() must not lean on a ranking already built.
          const best = decide(agents, req, ring, (a) => a.inflight, undefined, now).best(k, where);
          expect(best.map((c) => c.agent.agent_id)).toEqual(
            expected.slice(0, k).map((c) => c.agent.agent_id),
          );
        }
        expect(decide(agents, req, ring, (a) => a.inflight, undefined, now).count(where)).toBe(
          expected.length,
        );
      }
    }
  });

  it('gives best(), ranked and all the same candidate objects', () => {
    const agents = Array.from({ length: 20 }, (_, i) => plain(`x${i}`, i % 3));
    const d = decide(
      agents,
      { taskId: 't', capability: 'cap' },
      new HashRing(agents.map((a) => a.agent_id)),
    );
    const first = d.best(1)[0];
    expect(first).toBeDefined();
    expect(d.ranked[0]).toBe(first);
    expect(d.all).toContain(first);
    expect(d.best(3)).toEqual(d.ranked.slice(0, 3));
  });

  it('keeps the loads it was made with when the live counts move afterwards', () => {
    const live = new Map([
      ['a', 1],
      ['b', 2],
    ]);
    const d = decide(
      [plain('a', 0), plain('b', 0)],
      { taskId: 't', capability: 'cap' },
      new HashRing(['a', 'b']),
      (a) => live.get(a.agent_id) ?? 0,
    );
    live.set('a', 9);
    expect(d.all.map((c) => c.load)).toEqual([0.1, 0.2]);
    expect(d.ranked.map((c) => c.agent.agent_id)).toEqual(['a', 'b']);
  });
});

function plain(id: string, inflight: number): SnapshotAgent {
  return {
    agent_id: id,
    instance_id: 'i',
    epoch: 1,
    status: 'HEALTHY',
    capabilities: ['cap'],
    max_concurrency: 10,
    inflight,
    region: '',
    channel: 'push',
    lease_age_ms: 0,
  };
}

describe('HashRing matches the reference ring', () => {
  it('orders any subset the same way, for any task', () => {
    const rand = mulberry32(5);
    for (let round = 0; round < 60; round++) {
      const ids = Array.from(
        { length: 1 + Math.floor(rand() * 60) },
        (_, i) => `agent-${i}-${Math.floor(rand() * 1e6)}`,
      );
      const ring = new HashRing(ids);
      const reference = new ReferenceRing(ids);
      for (let t = 0; t < 20; t++) {
        const among = new Set(ids.filter(() => rand() < 0.5));
        const taskId = `task-${round}-${t}`;
        expect(ring.order(taskId, among)).toEqual(reference.order(taskId, among));
      }
    }
  });
});
