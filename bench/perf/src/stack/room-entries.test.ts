import { describe, expect, it } from 'vitest';
import { queuedInMetrics } from './room-entries.ts';

describe('queuedInMetrics', () => {
  it('reads the queued stage of the task events counter', () => {
    const text = [
      '# HELP reach_task_events_total Task stages recorded by this instance',
      '# TYPE reach_task_events_total counter',
      'reach_task_events_total{stage="sent",service="router"} 20000',
      'reach_task_events_total{stage="queued",service="router"} 5507',
      'reach_task_events_total{service="router",stage="dead"} 2',
      'reach_router_submits_total{status="202",outcome="accepted"} 9',
    ].join('\n');
    expect(queuedInMetrics(text)).toBe(5507);
  });

  it('finds the stage whatever the order of the labels', () => {
    expect(queuedInMetrics('reach_task_events_total{service="router",stage="queued"} 3\n')).toBe(3);
  });

  it('is 0 before any task waited, and ignores look-alike stages', () => {
    expect(queuedInMetrics('# TYPE reach_task_events_total counter\n')).toBe(0);
    expect(
      queuedInMetrics('reach_task_events_total{stage="queued_again",service="router"} 4\n'),
    ).toBe(0);
  });
});
