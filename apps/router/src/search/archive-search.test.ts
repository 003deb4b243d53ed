import { describe, expect, it } from 'vitest';
import { archiveQuery, foundOfRow } from './archive-search.ts';

describe('the archive query', () => {
  it('pushes the time range and every filter into InfluxQL', () => {
    const q = archiveQuery(
      {
        since: 1000,
        until: 5000,
        capability: "it's",
        statuses: new Set(['dead', 'cancelled'] as const),
        tenant: 'default',
        errorCode: 'MODEL_NOT_LOADED',
        minDurationMs: 10_000,
        before: { at: 4000, id: 'x' },
      },
      500,
    );
    expect(q).toContain('time >= 1000ms');
    expect(q).toContain(`"capability" = 'it\\'s'`);
    expect(q).toContain('"created_at_ms" <= 5000');
    expect(q).toContain(`("status" = 'dead' OR "status" = 'cancelled')`);
    expect(q).toContain(`("tenant" = '' OR "tenant" = 'default')`);
    expect(q).toContain('"created_at_ms" <= 4000');
    expect(q).toContain('"duration_ms" >= 10000');
    expect(q).toMatch(/ORDER BY time DESC LIMIT 500$/);
  });

  it('reads a row into a found task marked archived', () => {
    const t = foundOfRow({
      time: 9000,
      task_id: 'acme/t9',
      status: 'dead',
      capability: 'c',
      agent_id: 'a',
      attempts: 3,
      created_at_ms: 1000,
      ended_at_ms: 9000,
      error_code: 'X',
      parent_task_id: '',
    });
    expect(t).toMatchObject({ id: 'acme/t9', tenant: 'acme', endedAt: 9000, archived: true });
    expect(t?.parentTaskId).toBeUndefined();
    expect(foundOfRow({ time: 1 })).toBeUndefined();
  });
});
