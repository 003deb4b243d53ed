import { describe, expect, it } from 'vitest';
import {
  decodeTaskField,
  decodeTaskRecord,
  encodeTaskField,
  TaskRecordField,
  taskFields,
} from './task-record.ts';

describe('TaskRecordField', () => {
  it('names each hash field once', () => {
    const names = Object.values(TaskRecordField);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('decodeTaskRecord', () => {
  it('is undefined for an unknown or expired task', () => {
    expect(decodeTaskRecord({})).toBeUndefined();
    expect(decodeTaskRecord({ capability: 'echo' })).toBeUndefined();
  });

  it('types the status, parses numbers and lists, and leaves absent fields undefined', () => {
    const record = decodeTaskRecord({
      task_id: 't1',
      status: 'received',
      capability: 'echo',
      attempt: '2',
      deadline_ms: '0',
      created_at: '1700000000000',
      tags: '["gpu"]',
      region_policy: 'strict',
      stream: 'reach:{pool:echo}',
      stream_out: '1',
      seen: '1',
      unknown_field: 'x',
    });
    expect(record).toEqual({
      taskId: 't1',
      status: 'received',
      capability: 'echo',
      attempt: 2,
      deadlineMs: 0,
      createdAt: 1_700_000_000_000,
      tags: ['gpu'],
      regionPolicy: 'strict',
      stream: 'reach:{pool:echo}',
      streamOutput: true,
      seen: true,
    });
    expect(record?.agentId).toBeUndefined();
  });

  it('reads an unknown status, a bad number or an unreadable list as absent', () => {
    expect(decodeTaskRecord({ status: 'lost' })).toBeUndefined();
    expect(
      decodeTaskRecord({ status: 'sent', attempt: 'x', tags: '{', trace_agents: '{"a":1}' }),
    ).toEqual({ status: 'sent' });
  });

  it('keeps the strings of a list and reads any other policy as prefer', () => {
    expect(
      decodeTaskRecord({ status: 'sent', trace_agents: '["a",1,"b"]', region_policy: 'x' }),
    ).toEqual({ status: 'sent', traceAgents: ['a', 'b'], regionPolicy: 'prefer' });
  });
});

describe('taskFields', () => {
  const list = taskFields('status', 'agentId', 'hops', 'priority');

  it('names the HMGET arguments in order', () => {
    expect(list.fields).toEqual(['status', 'agent_id', 'hops', 'priority']);
  });

  it('decodes the reply, a null as absent', () => {
    expect(list.decode(['dead', 'a1', '3', null])).toEqual({
      status: 'dead',
      agentId: 'a1',
      hops: 3,
    });
    expect(list.decode([null, null, null, null])).toEqual({});
    expect(list.decode([])).toEqual({});
  });
});

describe('decodeTaskField and encodeTaskField', () => {
  it('decode an HGET reply', () => {
    expect(decodeTaskField('priority', '7')).toBe(7);
    expect(decodeTaskField('sessionId', null)).toBeUndefined();
    expect(decodeTaskField('sessionId', '')).toBe('');
  });

  it('round-trip each kind of value', () => {
    expect(encodeTaskField('hops', 3)).toBe('3');
    expect(encodeTaskField('seen', true)).toBe('1');
    expect(encodeTaskField('seen', false)).toBe('');
    expect(encodeTaskField('tags', ['a', 'b'])).toBe('["a","b"]');
    expect(encodeTaskField('region', 'eu')).toBe('eu');
    expect(decodeTaskField('tags', encodeTaskField('tags', ['a']))).toEqual(['a']);
    expect(decodeTaskField('hops', encodeTaskField('hops', 4))).toBe(4);
  });
});
