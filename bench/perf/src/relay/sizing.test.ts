import { describe, expect, it } from 'vitest';
import { fleetSizing, relaysFor, type FleetFigures } from './sizing.ts';

const figures: FleetFigures = {
  agents: 1000,
  // 5 % of a core for 1,000 agents.
  relayIdleCorePerAgent: 0.00005,
  relayMsPerTask: 0.2,
  rssAtZeroMiB: 100,
  rssMiB: 120,
};

describe('relaysFor', () => {
  it('takes the larger of the CPU and memory bounds', () => {
    // 10,000 agents: 0.5 core idle + 1,000 × 0.2 ms = 0.7 core → 2 relays at 0.5 core; 200 MiB more → 1.
    expect(relaysFor(figures, 10_000, 1000)).toMatchObject({ relays: 2, byCpu: 2, byMemory: 1 });
    expect(relaysFor(figures, 10_000, 0).relays).toBe(1);
    expect(relaysFor({ ...figures, rssMiB: 200 }, 10_000, 0)).toMatchObject({ byMemory: 5 });
  });

  it('prints a line per rate and the headline at 1,000 tasks/s', () => {
    const { relays, lines } = fleetSizing(figures);
    expect(relays).toBe(2);
    expect(lines).toHaveLength(4);
  });
});
