import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { TaskMessage } from '@agent-reach/protocol';
import { answerProbe, type HealthCheck } from './probe.ts';

const probe: TaskMessage = {
  task_id: 'probe:a1:1',
  capability: '_probe',
  payload: '{"probe_at":1}',
  attempt: 1,
  trace_id: '',
  callback_topic: '',
  deadline_ms: 0,
};
const log = () => pino({ level: 'silent' });
const answer = (health: HealthCheck) => answerProbe(probe, log, health, 1000);

describe('a probe answered with dependency detail', () => {
  it('passes with every dependency up and carries them', async () => {
    const out = await answer(() => ({
      dependencies: { 'model-gateway': { ok: true, latency_ms: 4 } },
    }));
    expect(out).toMatchObject({
      stage: 'completed',
      health: { ok: true, dependencies: { 'model-gateway': { ok: true, latency_ms: 4 } } },
    });
  });

  it('fails naming the dependencies down, and carries them', async () => {
    const out = await answer(async () => ({
      dependencies: {
        'vector-db': { ok: false, detail: 'refused' },
        'model-gateway': { ok: false },
        cache: { ok: true },
      },
    }));
    expect(out).toMatchObject({
      stage: 'failed',
      errorCode: 'HEALTH_CHECK_FAILED',
      retryable: false,
      error: 'health check failed: dependencies down: model-gateway, vector-db',
      health: { ok: false },
    });
  });

  it('keeps true and false as they were: no detail', async () => {
    expect(await answer(() => true)).toEqual({
      stage: 'completed',
      result: probe.payload,
      durationMs: 0,
    });
    const no = await answer(() => false);
    expect(no).toMatchObject({ stage: 'failed', error: 'health check failed: it returned false' });
    expect('health' in no).toBe(false);
  });
});
