import { describe, expect, it } from 'vitest';
import type { SnapshotAgent } from '@agent-reach/protocol';
import { HashRing } from './hash-ring.ts';
import { decide, type RouteRequest } from './policy.ts';

function agent(id: string, over: Partial<SnapshotAgent> = {}): SnapshotAgent {
  return {
    agent_id: id,
    instance_id: `${id}-i`,
    epoch: 1,
    status: 'HEALTHY',
    capabilities: ['cap'],
    max_concurrency: 10,
    inflight: 0,
    region: 'eu',
    channel: 'push',
    lease_age_ms: 0,
    ...over,
  };
}

function run(agents: SnapshotAgent[], req: Partial<RouteRequest> = {}) {
  const d = decide(
    agents,
    { taskId: 't-1', capability: 'cap', ...req },
    new HashRing(agents.map((a) => a.agent_id)),
  );
  return {
    order: d.ranked.map((c) => c.agent.agent_id),
    why: Object.fromEntries(
      d.all.filter((c) => c.excluded).map((c) => [c.agent.agent_id, c.excluded]),
    ),
    all: d.all,
  };
}

describe('decide: the candidate filter, each exclusion explained', () => {
  it('gives a DEGRADED agent tasks only when no HEALTHY agent has room under the watermark', () => {
    const idle = run([agent('h', { inflight: 0 }), agent('d', { status: 'DEGRADED' })]);
    expect(idle.order).toEqual(['h']);
    expect(idle.why).toEqual({ d: 'degraded' });
    const busy = run([agent('h', { inflight: 9 }), agent('d', { status: 'DEGRADED' })]);
    expect(busy.order).toEqual(['d']);
    expect(busy.why).toEqual({ h: 'watermark' });
    const full = run([
      agent('h', { inflight: 10 }),
      agent('d', { status: 'DEGRADED', inflight: 9 }),
    ]);
    expect(full.order).toEqual(['d']);
    expect(run([agent('d', { status: 'DEGRADED' })]).order).toEqual(['d']);
  });

  it('keeps HEALTHY agents, SUSPECT ones only when no HEALTHY candidate exists, never the others', () => {
    const r = run([
      agent('h'),
      agent('s', { status: 'SUSPECT' }),
      agent('o', { status: 'OFFLINE' }),
      agent('st', { status: 'STARTING' }),
      agent('d', { status: 'DRAINING' }),
    ]);
    expect(r.order).toEqual(['h']);
    expect(r.why).toEqual({ s: 'suspect', o: 'offline', st: 'starting', d: 'draining' });
    expect(
      run([agent('s', { status: 'SUSPECT' }), agent('o', { status: 'OFFLINE' })]).order,
    ).toEqual(['s']);
  });

  it('never sends to an unreachable endpoint agent, even when every HEALTHY one is full', () => {
    const full = agent('h', { inflight: 4, max_concurrency: 4 });
    const down = agent('u', { status: 'SUSPECT', unreachable: true });
    const r = run([full, down]);
    expect(r.order).toEqual([]);
    expect(r.why).toEqual({ h: 'full', u: 'unreachable' });
    expect(run([agent('s', { status: 'SUSPECT' }), down]).order).toEqual(['s']);
  });

  it('gives a tenant’s task only to agents of its tenant and shared ones', () => {
    const fleet = [
      agent('acme-1', { tenant: 'acme' }),
      agent('globex-1', { tenant: 'globex' }),
      agent('default-1'),
      agent('shared-1', { shared: true }),
    ];
    const acme = run(fleet, { tenant: 'acme' });
    expect(acme.order.sort()).toEqual(['acme-1', 'shared-1']);
    expect(acme.why).toEqual({ 'globex-1': 'tenant', 'default-1': 'tenant' });
    expect(run(fleet, { tenant: 'default' }).order.sort()).toEqual(['default-1', 'shared-1']);
    // No tenant asked: every agent (a question about the fleet, not one tenant's task).
    expect(run(fleet).order).toHaveLength(4);
  });

  it('requires every tag of the task among the agent’s capabilities and tags', () => {
    const r = run(
      [
        agent('gpu', { tags: ['gpu', 'a100'] }),
        agent('cpu'),
        agent('both', { capabilities: ['cap', 'gpu'] }),
      ],
      { tags: ['gpu'] },
    );
    expect(r.order.sort()).toEqual(['both', 'gpu']);
    expect(r.why).toEqual({ cpu: 'missing_tags' });
    expect(run([agent('gpu', { tags: ['gpu'] })], { tags: ['gpu', 'a100'] }).why).toEqual({
      gpu: 'missing_tags',
    });
  });

  it('keeps a region strictly, or prefers it and falls back when none is live there', () => {
    const fleet = [agent('eu-1'), agent('us-1', { region: 'us' })];
    expect(run(fleet, { region: 'us' }).order).toEqual(['us-1']);
    expect(run(fleet, { region: 'us' }).why).toEqual({ 'eu-1': 'region' });
    const usDown = [agent('eu-1'), agent('us-1', { region: 'us', status: 'OFFLINE' })];
    expect(run(usDown, { region: 'us' }).order).toEqual(['eu-1']);
    expect(run(usDown, { region: 'us', regionPolicy: 'strict' }).order).toEqual([]);
    expect(run(usDown, { region: 'us', regionPolicy: 'strict' }).why).toMatchObject({
      'eu-1': 'region',
    });
  });

  it('sends caller traffic to no agent in observation mode', () => {
    const r = run([agent('watch', { observe: true }), agent('serve')]);
    expect(r.order).toEqual(['serve']);
    expect(r.why).toEqual({ watch: 'observing' });
  });

  it('skips agents at or above the 85 % watermark while another has room, and full ones always', () => {
    const r = run([agent('busy', { inflight: 9 }), agent('idle', { inflight: 1 })]);
    expect(r.order).toEqual(['idle']);
    expect(r.why).toEqual({ busy: 'watermark' });
    // Everyone over the watermark: the least loaded one still serves; a full one never.
    const hot = run([agent('a', { inflight: 9 }), agent('b', { inflight: 10 })]);
    expect(hot.order).toEqual(['a']);
    expect(hot.why).toEqual({ b: 'full' });
  });

  it('excludes agents on the task’s trace and slow outliers that are ejected', () => {
    const r = run([agent('a'), agent('b', { ejected_until: Date.now() + 60_000 }), agent('c')], {
      exclude: new Set(['a']),
    });
    expect(r.order).toEqual(['c']);
    expect(r.why).toEqual({ a: 'on_trace', b: 'ejected' });
  });
});

describe('decide: the score', () => {
  it('prefers the lowest load ratio', () => {
    expect(
      run([
        agent('a', { inflight: 5 }),
        agent('b', { inflight: 2 }),
        agent('c', { inflight: 3, max_concurrency: 4 }),
      ]).order,
    ).toEqual(['b', 'a', 'c']);
  });

  it('lets priority and weight decide among agents of similar load, never against a clearly lower load', () => {
    expect(
      run([agent('plain', { inflight: 2 }), agent('favoured', { inflight: 2, priority: 5 })])
        .order[0],
    ).toBe('favoured');
    expect(
      run([agent('plain', { inflight: 2 }), agent('heavy', { inflight: 2, weight: 2 })]).order[0],
    ).toBe('heavy');
    // A high-priority agent with 3 more tasks out of 10 still loses.
    expect(
      run([
        agent('plain', { inflight: 2 }),
        agent('favoured', { inflight: 5, priority: 10, weight: 10 }),
      ]).order[0],
    ).toBe('plain');
  });

  it('penalises an agent whose execution time is over 1.5× the capability’s mean', () => {
    const slow = agent('slow', { ewma_ms: { cap: 900 } });
    const fast = [
      agent('f1', { inflight: 2, ewma_ms: { cap: 100 } }),
      agent('f2', { inflight: 2, ewma_ms: { cap: 120 } }),
    ];
    const r = run([slow, ...fast]);
    expect(r.order[2]).toBe('slow');
    const slowScore = r.all.find((c) => c.agent.agent_id === 'slow')?.score ?? 0;
    expect(slowScore).toBeCloseTo(0.25);
  });

  it('counts a health score under 98 as load: 10 load units per 100 points lacking', () => {
    // Max 10: one task is 0.1 of load. At 95 the agent looks 0.5 fuller than it is.
    const failing = agent('failing', { health_score: 95 });
    const idle = run([failing, agent('ok', { inflight: 0 })]);
    expect(idle.order).toEqual(['ok', 'failing']);
    expect(idle.all.find((c) => c.agent.agent_id === 'failing')?.score).toBeCloseTo(0.5);
    // It wins once the other holds six tasks more (0.6 > 0.5), not four (0.4).
    expect(run([failing, agent('ok', { inflight: 4 })]).order[0]).toBe('ok');
    expect(run([failing, agent('ok', { inflight: 6 })]).order[0]).toBe('failing');
    // The watermark reads the adjusted load too: 4 tasks (0.4 + 0.5) is past 0.85.
    const busy = run([
      agent('failing', { health_score: 95, inflight: 4 }),
      agent('ok', { inflight: 7 }),
    ]);
    expect(busy.order).toEqual(['ok']);
    expect(busy.why).toEqual({ failing: 'watermark' });
    // 98 and up is noise: no penalty, equal loads go by the ring as before.
    const near = run([agent('a', { health_score: 98 }), agent('b')]);
    expect(near.all.map((c) => c.score)).toEqual([0, 0]);
  });

  it('sticks a session to its agent while HEALTHY and under the watermark, not when SUSPECT', () => {
    const fleet = [agent('a', { inflight: 5 }), agent('b', { inflight: 0 })];
    expect(run(fleet, { sessionAgent: 'a' }).order[0]).toBe('a');
    expect(run([agent('a', { inflight: 9 }), agent('b')], { sessionAgent: 'a' }).order[0]).toBe(
      'b',
    );
    expect(run([agent('a', { status: 'SUSPECT' })], { sessionAgent: 'a' }).order).toEqual(['a']);
    expect(
      run([agent('a', { status: 'SUSPECT' }), agent('b', { status: 'SUSPECT', inflight: 3 })], {
        sessionAgent: 'b',
      }).order[0],
    ).toBe('a');
  });

  it('puts the agent a retry should avoid last', () => {
    expect(run([agent('a'), agent('b', { inflight: 3 })], { avoid: 'a' }).order).toEqual([
      'b',
      'a',
    ]);
  });
});
