import { describe, expect, it } from 'vitest';
import { simulate } from './engine.ts';
import { POLICY_NAMES } from './policies.ts';
import { SnapshotBoard } from './router-view.ts';
import { generateFleet, generateWorkload } from './workload.ts';

describe('simulate', () => {
  // A small fleet pushed hard: slots run out often, so the pool and the refusals are exercised.
  const fleet = generateFleet(7, {
    agents: 4,
    minSpeed: 0.5,
    maxSpeed: 2,
    minConcurrency: 2,
    maxConcurrency: 5,
    parallelShare: 0.5,
  });
  const workload = generateWorkload({ seed: 7, tasks: 4_000, utilisation: 0.95, fleet });

  it.each(POLICY_NAMES)('never lets an agent exceed max_concurrency (%s)', async (policy) => {
    const run = await simulate(workload, { policy, seed: 7 });
    expect(run.completed).toBe(workload.tasks.length);
    run.peakInflight.forEach((peak, i) =>
      expect(peak).toBeLessThanOrEqual(run.maxConcurrency[i] ?? 0),
    );
    // The fleet does fill up, so the bound is actually tested.
    expect(run.peakInflight.some((peak, i) => peak === run.maxConcurrency[i])).toBe(true);
    expect(Array.from(run.completionMs).every((ms) => ms > 0)).toBe(true);
  });

  it('gives the same result for the same seed', async () => {
    const a = await simulate(workload, { policy: 'project', seed: 7, routers: 2 });
    const b = await simulate(workload, { policy: 'project', seed: 7, routers: 2 });
    expect(a).toEqual(b);
  });
});

describe('SnapshotBoard', () => {
  it('gives routers the snapshot plus their own deliveries, reset by the next snapshot', async () => {
    const board = new SnapshotBoard();
    const view = board.newView(5000);
    const spec = { agent_id: 'a', speed: 1, max_concurrency: 4, parallel_slots: 4 };
    await board.publish(0, [{ spec, inflight: 1 }]);
    const [agent] = view.agentsFor('sim');
    expect(agent?.inflight).toBe(1);
    view.noteInflight('a', 3);
    expect(agent && view.inflightOf(agent)).toBe(3);
    await board.publish(5000, [{ spec, inflight: 0 }]);
    const [fresh] = view.agentsFor('sim');
    expect(fresh && view.inflightOf(fresh)).toBe(0);
  });
});
