import { describe, expect, it } from 'vitest';
import { healthScore, probeSuccessRun, taskErrorRate } from './health.ts';

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
