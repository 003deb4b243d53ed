import { describe, expect, it } from 'vitest';
import type { FullAgentView } from '@agent-reach/protocol';
import { flaggedDependencies } from './dependency-watch.ts';

const NOW = 100_000;
const INTERVAL = 10_000;

function agent(
  id: string,
  down: string[],
  o: { capabilities?: string[]; at?: number; status?: FullAgentView['status'] } = {},
): FullAgentView {
  return {
    agent_id: id,
    instance_id: 'i',
    epoch: 1,
    status: o.status ?? 'HEALTHY',
    capabilities: o.capabilities ?? ['chat'],
    health_check: {
      ok: down.length === 0,
      at: o.at ?? NOW - 1000,
      dependencies: Object.fromEntries(down.map((d) => [d, { ok: false }])),
    },
  } as unknown as FullAgentView;
}

describe('dependencies flagged fleet-wide', () => {
  it('flags a dependency down on two agents and half the capability', () => {
    const views = [agent('a', ['gw']), agent('b', ['gw']), agent('c', []), agent('d', [])];
    expect(flaggedDependencies(views, NOW, INTERVAL)).toEqual([
      { dependency: 'gw', capability: 'chat', agents: ['a', 'b'], of: 4 },
    ]);
  });

  it('does not flag one agent, nor under half of the capability', () => {
    expect(flaggedDependencies([agent('a', ['gw']), agent('b', [])], NOW, INTERVAL)).toEqual([]);
    const five = [
      agent('a', ['gw']),
      agent('b', ['gw']),
      ...['c', 'd', 'e'].map((id) => agent(id, [])),
    ];
    expect(flaggedDependencies(five, NOW, INTERVAL)).toEqual([]);
  });

  it('counts only answers within the last probe interval and a half, of live agents', () => {
    const old = [agent('a', ['gw']), agent('b', ['gw'], { at: NOW - 16_000 })];
    expect(flaggedDependencies(old, NOW, INTERVAL)).toEqual([]);
    const offline = [agent('a', ['gw']), agent('b', ['gw'], { status: 'OFFLINE' })];
    expect(flaggedDependencies(offline, NOW, INTERVAL)).toEqual([]);
  });

  it('flags per capability: the one whose agents share it', () => {
    const views = [
      agent('a', ['gw'], { capabilities: ['chat', 'embed'] }),
      agent('b', ['gw'], { capabilities: ['chat'] }),
      agent('c', [], { capabilities: ['embed'] }),
      agent('d', [], { capabilities: ['embed'] }),
    ];
    expect(flaggedDependencies(views, NOW, INTERVAL)).toEqual([
      { dependency: 'gw', capability: 'chat', agents: ['a', 'b'], of: 2 },
    ]);
  });
});
