import { describe, expect, it } from 'vitest';
import { taskTimelineStatement, withGaps } from './timeline.ts';

describe('withGaps', () => {
  it('orders stages by time, then lifecycle, and measures each gap from the stage before', () => {
    const stages = withGaps([
      { stage: 'completed', at: 1030, agent_id: 'a', attempt: 1, duration_ms: 12 },
      { stage: 'received', at: 1010, agent_id: 'a', attempt: 1 },
      { stage: 'sent', at: 1000, agent_id: 'a', attempt: 1 },
      { stage: 'accepted', at: 1000 },
    ]);
    expect(stages).toEqual([
      { stage: 'accepted', at: 1000, gap_ms: 0, agent_id: null, attempt: null },
      { stage: 'sent', at: 1000, gap_ms: 0, agent_id: 'a', attempt: 1 },
      { stage: 'received', at: 1010, gap_ms: 10, agent_id: 'a', attempt: 1 },
      { stage: 'completed', at: 1030, gap_ms: 20, agent_id: 'a', attempt: 1, duration_ms: 12 },
    ]);
  });

  it('keeps a reason and drops empty extras', () => {
    expect(withGaps([{ stage: 'failed', at: 5, reason: 'boom', duration_ms: null }])).toEqual([
      { stage: 'failed', at: 5, gap_ms: 0, agent_id: null, attempt: null, reason: 'boom' },
    ]);
    expect(withGaps([])).toEqual([]);
  });
});

describe('taskTimelineStatement', () => {
  it('finds the task by its field within the look-back window', () => {
    const q = taskTimelineStatement("t-1'x", { lookback: '7d' });
    expect(q).toContain(`WHERE "task_id" = 't-1\\'x' AND time >= now() - 7d and time <= now()`);
    expect(taskTimelineStatement('t')).toContain('now() - 30d');
  });

  it('reads only the range it is given (an archived task’s life)', () => {
    const q = taskTimelineStatement('t', { lookback: '7d', range: { fromMs: 1000, toMs: 2000 } });
    expect(q).toContain(`AND time >= 1000ms and time <= 2000ms`);
    expect(q).not.toContain('now()');
  });
});
