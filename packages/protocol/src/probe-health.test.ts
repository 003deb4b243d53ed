import { describe, expect, it } from 'vitest';
import { decodeAck, encodeAck } from './codecs.ts';
import {
  decodeAgentHealthCheck,
  failingDependencies,
  MAX_DEPENDENCIES,
  probeHealthOf,
} from './probe-health.ts';

describe('probe health answers', () => {
  it('read true/false as they were, and an object with its dependencies', () => {
    expect(probeHealthOf(true)).toEqual({ ok: true, dependencies: {} });
    expect(probeHealthOf(false)).toEqual({ ok: false, dependencies: {} });
    expect(
      probeHealthOf({
        dependencies: { 'model-gateway': { ok: false, latency_ms: 3000.4, detail: 'timeout' } },
      }),
    ).toEqual({
      ok: false,
      dependencies: { 'model-gateway': { ok: false, latency_ms: 3000, detail: 'timeout' } },
    });
    // An explicit ok wins over the dependencies' (an optional dependency may be down).
    expect(probeHealthOf({ ok: true, dependencies: { cache: { ok: false } } })?.ok).toBe(true);
    expect(probeHealthOf('yes')).toBeUndefined();
    expect(probeHealthOf(null)).toBeUndefined();
  });

  it('drop bad names, shapes and the excess, never the answer', () => {
    const many = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`dep-${String(i).padStart(2, '0')}`, { ok: true }]),
    );
    expect(Object.keys(probeHealthOf({ dependencies: many })!.dependencies)).toHaveLength(
      MAX_DEPENDENCIES,
    );
    const cleaned = probeHealthOf({
      dependencies: {
        'bad name': { ok: false },
        noOk: { latency_ms: 3 },
        long: { ok: true, detail: 'x'.repeat(1000), latency_ms: -1 },
      },
    })!;
    expect(cleaned.dependencies).toEqual({ long: { ok: true, detail: 'x'.repeat(256) } });
    expect(
      failingDependencies(probeHealthOf({ dependencies: { b: { ok: false }, a: { ok: false } } })),
    ).toEqual(['a', 'b']);
  });

  it('travel on a probe ack as JSON text and back', () => {
    const health = { ok: false, dependencies: { db: { ok: false, latency_ms: 12 } } };
    const fields = encodeAck({
      task_id: 'probe:a1:1',
      stage: 'failed',
      agent_id: 'a1',
      instance_id: 'i1',
      epoch: 1,
      attempt: 1,
      error: 'health check failed',
      retryable: false,
      health,
    });
    expect(fields).toContain('health');
    const decoded = decodeAck(fields);
    expect(decoded.ok && decoded.value.health).toEqual(health);
    // An unreadable one is left out; the ack still applies.
    const bad = [...fields.slice(0, fields.indexOf('health')), 'health', '{nope'];
    const again = decodeAck(bad);
    expect(again.ok && again.value.health).toBeUndefined();
    expect(again.ok).toBe(true);
  });

  it('are kept with the agent with their time', () => {
    expect(decodeAgentHealthCheck(JSON.stringify({ ok: true, at: 5, dependencies: {} }))).toEqual({
      ok: true,
      at: 5,
      dependencies: {},
    });
    expect(decodeAgentHealthCheck('{"ok":true}')).toBeUndefined();
    expect(decodeAgentHealthCheck(undefined)).toBeUndefined();
  });
});
