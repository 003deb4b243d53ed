import { describe, expect, it } from 'vitest';
import type { AgentView } from '@agent-reach/protocol';
import { dependenciesText } from './agents.ts';

const view = (health_check?: AgentView['health_check']) => ({ health_check }) as AgentView;

describe('the DEPENDENCIES column of reach agents', () => {
  it('lists those down first, with their latency when given', () => {
    expect(
      dependenciesText(
        view({
          ok: false,
          at: 1,
          dependencies: {
            db: { ok: true, latency_ms: 4 },
            'model-gateway': { ok: false, latency_ms: 3000 },
            cache: { ok: true },
          },
        }),
      ),
    ).toBe('model-gateway down 3000ms, cache ok, db ok 4ms');
  });

  it('is a dash for an agent that reported none', () => {
    expect(dependenciesText(view())).toBe('-');
    expect(dependenciesText(view({ ok: true, at: 1, dependencies: {} }))).toBe('-');
  });
});
