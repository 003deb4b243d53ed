import { describe, expect, it } from 'vitest';
import { healthScore, probeSuccessRun, runtimePenalty, taskErrorRate } from './health.ts';
import { toAgentView } from './agent-record.ts';

describe('health score and error rate', () => {
  it('is 100 with no outcomes or only good ones', () => {
    expect(healthScore('')).toBe(100);
    expect(healthScore('ooooPP')).toBe(100);
  });

  it('takes off each failure, lapse, receipt timeout and failed probe in full, a slow completion by half', () => {
    expect(healthScore('oooooooooof')).toBe(91);
    expect(healthScore('ffffffffff')).toBe(0);
    expect(healthScore('ss')).toBe(50);
    expect(healthScore('oltp')).toBe(25);
  });

  it('counts the error rate over task outcomes only', () => {
    expect(taskErrorRate('ooofPPpp')).toEqual({ tasks: 4, errors: 1, rate: 0.25 });
    expect(taskErrorRate('')).toEqual({ tasks: 0, errors: 0, rate: 0 });
  });

  it('counts passed probes since the last bad outcome, completions neither counting nor breaking', () => {
    expect(probeSuccessRun('ffffPoP')).toBe(2);
    expect(probeSuccessRun('PPPf')).toBe(0);
    expect(probeSuccessRun('PpPP')).toBe(2);
    expect(probeSuccessRun('PsP')).toBe(2);
  });
});

describe('runtime figures in the health score', () => {
  it('take points for a slow event loop and a GC storm, each capped', () => {
    expect(runtimePenalty(undefined)).toBe(0);
    expect(runtimePenalty({ loop_lag_p99_ms: 240, gc_share: 0.05 })).toBe(0);
    expect(runtimePenalty({ loop_lag_p99_ms: 750 })).toBe(10);
    expect(runtimePenalty({ loop_lag_p99_ms: 5000, gc_share: 0.2 })).toBe(30);
    expect(runtimePenalty({ loop_lag_p99_ms: 5000, gc_share: 0.9 })).toBe(40);
  });

  it('lower the score an agent view shows', () => {
    const record = {
      agent_id: 'a1',
      status: 'HEALTHY',
      outcomes: 'o'.repeat(10),
      runtime: JSON.stringify({ loop_lag_p99_ms: 1250, gc_share: 0.15, rss_bytes: 1 }),
    };
    expect(toAgentView(record, 0, 0)?.health_score).toBe(75);
    expect(toAgentView({ ...record, runtime: '' }, 0, 0)?.health_score).toBe(100);
  });
});
