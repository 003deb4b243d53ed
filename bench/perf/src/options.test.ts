import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from './options.ts';

describe('parseArgs', () => {
  it('gives the full session by default and a short one with --quick', () => {
    const full = parseArgs([]);
    expect(full.reps).toBe(3);
    expect(full.floodTasks).toBe(20_000);
    expect(full.pacedRates).toEqual([200, 2000, 4000]);
    const quick = parseArgs(['--quick']);
    expect(quick.reps).toBe(1);
    expect(quick.floodTasks).toBeLessThan(full.floodTasks);
    expect(quick.systems).toEqual(['reach', 'bullmq', 'floor']);
  });

  it('reads lists and numbers, and refuses what it does not know', () => {
    const o = parseArgs([
      '--only',
      'reach,floor',
      '--modes',
      'flood',
      '--tasks',
      '500',
      '--rates',
      '100,300',
    ]);
    expect(o.systems).toEqual(['reach', 'floor']);
    expect(o.modes).toEqual(['flood']);
    expect(o.floodTasks).toBe(500);
    expect(o.pacedRates).toEqual([100, 300]);
    expect(() => parseArgs(['--only', 'kafka'])).toThrow(UsageError);
    expect(() => parseArgs(['--tasks', 'many'])).toThrow(UsageError);
    expect(() => parseArgs(['--fast'])).toThrow(UsageError);
    expect(() => parseArgs(['--fast'])).toThrow(expect.objectContaining({ helped: false }));
    expect(() => parseArgs(['--help'])).toThrow(expect.objectContaining({ helped: true }));
  });

  it('runs the services from the build it is told, settling auto by default', () => {
    expect(parseArgs([]).from).toBe('auto');
    expect(parseArgs(['--from', 'dist']).from).toBe('dist');
    expect(() => parseArgs(['--from', 'release'])).toThrow(UsageError);
  });

  it('profiles one Agent-Reach flood', () => {
    const o = parseArgs(['--profile']);
    expect(o).toMatchObject({ profile: true, systems: ['reach'], modes: ['flood'], reps: 1 });
  });

  it('runs the topology systems, floods only, with a fleet of 30 agents over 3 capabilities', () => {
    const o = parseArgs(['--topology', 'cluster']);
    expect(o).toMatchObject({
      topology: 'cluster',
      systems: ['one-redis', 'cluster', 'cluster-3r'],
      modes: ['flood'],
      agents: 30,
      capabilities: 3,
      routers: 3,
      workers: 3,
      reps: 3,
    });
    expect(parseArgs(['--topology', 'cluster', '--quick']).reps).toBe(1);
    expect(parseArgs(['--topology', 'cluster', '--workers', '2']).workers).toBe(2);
    expect(() => parseArgs(['--topology', 'mesh'])).toThrow(UsageError);
    expect(() => parseArgs(['--topology', 'cluster', '--modes', 'http'])).toThrow(UsageError);
    expect(() =>
      parseArgs(['--topology', 'cluster', '--agents', '2', '--capabilities', '3']),
    ).toThrow(UsageError);
    expect(() => parseArgs(['--topology', 'cluster', '--routers', '1'])).toThrow(UsageError);
    expect(parseArgs(['--only', 'cluster', '--topology', 'cluster']).systems).toEqual(['cluster']);
    expect(() => parseArgs(['--topology', 'cluster', '--only', 'bullmq'])).toThrow(UsageError);
    expect(() => parseArgs(['--only', 'cluster'])).toThrow(UsageError);
  });

  it('runs the relay comparison alone with --modes relay, and keeps the default modes', () => {
    expect(parseArgs([]).modes).toEqual(['flood', 'paced', 'http']);
    expect(parseArgs([]).relay).toBeUndefined();
    const o = parseArgs(['--modes', 'relay']);
    expect(o).toMatchObject({
      relay: 'compare',
      systems: ['reach', 'relay-http', 'relay-a2a'],
      modes: ['flood', 'paced'],
      workers: 1,
      floodTasks: 3000,
      floodWindow: 64,
      pacedRates: [200],
      reps: 3,
    });
    expect(parseArgs(['--modes', 'relay', '--quick']).reps).toBe(1);
    expect(parseArgs(['--modes', 'relay', '--tasks', '800']).floodTasks).toBe(800);
    expect(parseArgs(['--modes', 'relay', '--only', 'relay-a2a,reach']).systems).toEqual([
      'reach',
      'relay-a2a',
    ]);
    expect(() => parseArgs(['--modes', 'relay,flood'])).toThrow(UsageError);
    expect(() => parseArgs(['--modes', 'relay', '--only', 'bullmq'])).toThrow(UsageError);
    expect(() => parseArgs(['--modes', 'relay', '--topology', 'cluster'])).toThrow(UsageError);
    expect(() => parseArgs(['--only', 'relay-http'])).toThrow(UsageError);
  });

  it('runs one relay with 1,000 endpoint agents with --modes relay-fleet', () => {
    const o = parseArgs(['--modes', 'relay-fleet']);
    expect(o).toMatchObject({
      relay: 'fleet',
      systems: ['relay-http'],
      agents: 1000,
      idleMs: 20_000,
      pacedRates: [250],
      reps: 1,
    });
    expect(parseArgs(['--modes', 'relay-fleet', '--agents', '50']).agents).toBe(50);
    expect(() => parseArgs(['--modes', 'relay-fleet', '--only', 'reach'])).toThrow(UsageError);
  });

  it('measures the router alone with --modes router-only, against its floor', () => {
    const o = parseArgs(['--modes', 'router-only']);
    expect(o).toMatchObject({
      routerOnly: true,
      systems: ['router', 'router-floor'],
      modes: ['flood'],
      floodTasks: 20_000,
      reps: 3,
      profile: false,
      traceGc: false,
    });
    expect(o.relay).toBeUndefined();
    expect(parseArgs(['--modes', 'router-only', '--quick'])).toMatchObject({
      floodTasks: 2000,
      reps: 1,
    });
    expect(parseArgs(['--modes', 'router-only', '--only', 'router']).systems).toEqual(['router']);
    expect(() => parseArgs(['--modes', 'router-only,flood'])).toThrow(UsageError);
    expect(() => parseArgs(['--modes', 'router-only', '--only', 'bullmq'])).toThrow(UsageError);
    expect(() => parseArgs(['--modes', 'router-only', '--topology', 'cluster'])).toThrow(
      UsageError,
    );
    expect(() => parseArgs(['--only', 'router'])).toThrow(UsageError);
  });

  it('profiles one router-only flood of the router, and traces GC where there is a router', () => {
    expect(parseArgs(['--modes', 'router-only', '--profile'])).toMatchObject({
      routerOnly: true,
      profile: true,
      systems: ['router'],
      modes: ['flood'],
      reps: 1,
    });
    expect(parseArgs(['--modes', 'router-only', '--trace-gc']).traceGc).toBe(true);
    expect(parseArgs(['--trace-gc']).traceGc).toBe(true);
    expect(() => parseArgs(['--topology', 'cluster', '--trace-gc'])).toThrow(UsageError);
    expect(() => parseArgs(['--modes', 'relay', '--trace-gc'])).toThrow(UsageError);
  });

  it('runs the fairness mode alone, on 2 agents × 8 slots with B at 10 tasks/s', () => {
    const o = parseArgs(['--modes', 'fairness']);
    expect(o).toMatchObject({
      fairness: true,
      systems: [],
      workers: 2,
      concurrency: 8,
      pacedRates: [10],
      reps: 1,
    });
    expect(parseArgs(['--modes', 'fairness', '--quick']).deadlineMs).toBeLessThan(o.deadlineMs);
    expect(parseArgs(['--modes', 'fairness', '--rates', '20', '--workers', '4'])).toMatchObject({
      pacedRates: [20],
      workers: 4,
    });
    expect(() => parseArgs(['--modes', 'fairness,flood'])).toThrow(UsageError);
    expect(() => parseArgs(['--modes', 'fairness', '--only', 'reach'])).toThrow(UsageError);
    expect(() => parseArgs(['--modes', 'fairness', '--profile'])).toThrow(UsageError);
  });

  it('runs the fleet mode alone at 1,000, 3,000 and 10,000 agents, 200 with --quick', () => {
    expect(parseArgs(['--modes', 'fleet'])).toMatchObject({
      fleet: true,
      fleetSizes: [1000, 3000, 10_000],
      idleMs: 30_000,
      systems: [],
    });
    const quick = parseArgs(['--modes', 'fleet', '--quick']);
    expect(quick).toMatchObject({ fleetSizes: [200], idleMs: 8000 });
    expect(quick.deadlineMs).toBeLessThanOrEqual(150_000);
    expect(parseArgs(['--agents', '500,2000', '--modes', 'fleet']).fleetSizes).toEqual([500, 2000]);
    expect(() => parseArgs(['--agents', '500,2000'])).toThrow(UsageError);
    expect(() => parseArgs(['--modes', 'fleet,flood'])).toThrow(UsageError);
    expect(parseArgs(['--modes', 'fleet', '--profile']).profile).toBe(true);
    expect(() => parseArgs(['--modes', 'fleet', '--trace-gc'])).toThrow(UsageError);
  });
});
