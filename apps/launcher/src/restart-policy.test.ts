import { describe, expect, it } from 'vitest';
import { describeExitStatus, RestartPolicy } from './restart-policy.ts';

const crash = { code: 1, signal: null };

describe('RestartPolicy', () => {
  it('restarts failures, and calls the 5th within 60 s of one service a crash loop', () => {
    const policy = new RestartPolicy();
    for (let i = 1; i <= 4; i++) {
      expect(policy.decide('router', crash, i * 1000)).toEqual({ action: 'restart', exits: i });
    }
    // Another service keeps its own count.
    expect(policy.decide('registry-sync', crash, 4500)).toEqual({ action: 'restart', exits: 1 });
    expect(policy.decide('router', { code: null, signal: 'SIGKILL' }, 5000)).toEqual({
      action: 'crash-loop',
      exits: 5,
    });
  });

  it('forgets exits older than the window', () => {
    const policy = new RestartPolicy({ maxExits: 3, windowMs: 10_000 });
    expect(policy.decide('router', crash, 0).action).toBe('restart');
    expect(policy.decide('router', crash, 5_000).action).toBe('restart');
    expect(policy.decide('router', crash, 10_000)).toEqual({ action: 'restart', exits: 2 });
    expect(policy.decide('router', crash, 11_000)).toEqual({ action: 'crash-loop', exits: 3 });
  });

  it('leaves a service that exited 0 stopped, without counting it', () => {
    const policy = new RestartPolicy({ maxExits: 2 });
    expect(policy.decide('agent echo-1', { code: 0, signal: null }, 0)).toEqual({
      action: 'leave',
    });
    expect(policy.decide('agent echo-1', crash, 1)).toEqual({ action: 'restart', exits: 1 });
  });

  it('words exits and counts for the output', () => {
    expect(describeExitStatus({ code: 3, signal: null })).toBe('exited with code 3');
    expect(describeExitStatus({ code: null, signal: 'SIGKILL' })).toBe('was killed by SIGKILL');
    expect(new RestartPolicy().describe(1)).toBe('(1 of 5 in 60 s)');
  });
});
