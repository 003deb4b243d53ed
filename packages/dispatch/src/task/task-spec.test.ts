import { describe, expect, it } from 'vitest';
import { decodeTaskRecord } from '@agent-reach/protocol';
import { constraintArgs, NO_CONSTRAINTS } from './task-spec.ts';

describe('constraintArgs', () => {
  it('stores nothing for a task without constraints', () => {
    expect(constraintArgs(NO_CONSTRAINTS)).toEqual([]);
    expect(constraintArgs({ ...NO_CONSTRAINTS, tenant: 'default', maxExecutionMs: 0 })).toEqual([]);
  });

  it('stores each constraint under its task-hash field, as the scripts read it', () => {
    const args = constraintArgs({
      tags: ['gpu'],
      region: 'eu',
      regionPolicy: 'strict',
      sessionId: 's1',
      parentTaskId: 'p1',
      hops: 2,
      traceAgents: ['a1'],
      tenant: 'acme',
      priority: 7,
      maxExecutionMs: 30_000,
      stream: true,
      fallbackCapabilities: ['echo-2'],
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    expect(args).toEqual([
      { field: 'tags', value: '["gpu"]' },
      { field: 'region', value: 'eu' },
      { field: 'region_policy', value: 'strict' },
      { field: 'session_id', value: 's1' },
      { field: 'parent_task_id', value: 'p1' },
      { field: 'hops', value: '2' },
      { field: 'trace_agents', value: '["a1"]' },
      { field: 'tenant', value: 'acme' },
      { field: 'priority', value: '7' },
      { field: 'max_execution_ms', value: '30000' },
      { field: 'stream_out', value: '1' },
      { field: 'fallback_capabilities', value: '["echo-2"]' },
      {
        field: 'traceparent',
        value: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
    ]);
    // The codec reads them back.
    const hash = Object.fromEntries(args.map((a) => [a.field, a.value]));
    expect(decodeTaskRecord({ ...hash, status: 'accepted' })).toMatchObject({
      tags: ['gpu'],
      regionPolicy: 'strict',
      hops: 2,
      traceAgents: ['a1'],
      priority: 7,
      maxExecutionMs: 30_000,
      streamOutput: true,
      fallbackCapabilities: ['echo-2'],
    });
  });

  it('leaves out the region policy of a task without a region', () => {
    expect(constraintArgs({ ...NO_CONSTRAINTS, regionPolicy: 'strict' })).toEqual([]);
  });
});
