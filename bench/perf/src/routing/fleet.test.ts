import { describe, expect, it } from 'vitest';
import { decodeSnapshot } from '@agent-reach/protocol';
import { capabilityNames, syntheticSnapshot, snapshotText } from './fleet.ts';

describe('syntheticSnapshot', () => {
  it('is the same for the same seed and decodes like a real one', () => {
    const a = syntheticSnapshot(1000, 100);
    const b = syntheticSnapshot(1000, 100);
    expect(a.agents.map((x) => x.agent_id)).toEqual(b.agents.map((x) => x.agent_id));
    const decoded = decodeSnapshot(snapshotText(a, 7));
    expect(decoded?.version).toBe(7);
    expect(decoded?.agents).toHaveLength(1000);
  });

  it('gives every capability candidates, mostly HEALTHY ones', () => {
    const s = syntheticSnapshot(1000, 100);
    const caps = new Set(s.agents.flatMap((a) => a.capabilities));
    expect(caps).toEqual(new Set(capabilityNames(100)));
    const healthy = s.agents.filter((a) => a.status === 'HEALTHY').length;
    expect(healthy / s.agents.length).toBeGreaterThan(0.85);
    expect(new Set(s.agents.map((a) => a.agent_id)).size).toBe(1000);
  });
});
