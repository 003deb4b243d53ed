import { describe, expect, it } from 'vitest';
import { MAX_ARCHIVE_RECORD_BYTES } from '@agent-reach/events';
import type { TaskRecord } from '@agent-reach/protocol';
import { archivePointOf, archivesPayloads, endOf, lastErrorCode } from './archive-record.ts';

const settings = {
  archivePayloads: true,
  archivePayloadsByCapability: { kyc: false, constructor: false },
  archiveMaxValueBytes: 32_768,
};

const completed: TaskRecord = {
  status: 'completed',
  capability: 'echo',
  agentId: 'gpu-7',
  attempt: 2,
  createdAt: 1000,
  completedAt: 1600,
  payload: '{"text":"hi"}',
  result: '{"echo":"hi"}',
  parentTaskId: 'acme/parent-1',
  callbackTopic: 'acme/topic',
};

const failedLine = JSON.stringify({
  stage: 'failed',
  at: 1200,
  attempt: 1,
  agent_id: 'gpu-3',
  error: 'model missing',
  error_code: 'MODEL_NOT_LOADED',
});

describe('archivePointOf', () => {
  it('archives the view for its own tenant, with payload and result, tags from the task', () => {
    const point = archivePointOf(
      'acme/t-1',
      completed,
      [failedLine],
      ['acme/c-2', 'acme/c-1'],
      settings,
    );
    expect(point).toMatchObject({
      tenant: 'acme',
      capability: 'echo',
      agent_id: 'gpu-7',
      status: 'completed',
      task_id: 'acme/t-1',
      attempts: 2,
      created_at_ms: 1000,
      ended_at_ms: 1600,
      duration_ms: 600,
      error_code: 'MODEL_NOT_LOADED',
      parent_task_id: 'acme/parent-1',
      payload_cut: false,
      result_cut: false,
    });
    const record = JSON.parse(point?.record ?? '') as Record<string, unknown>;
    expect(record).toMatchObject({
      task_id: 't-1',
      status: 'completed',
      parent_task_id: 'parent-1',
      callback_topic: 'topic',
      children: ['c-1', 'c-2'],
      payload: { text: 'hi' },
      result: { echo: 'hi' },
    });
    expect(record).not.toHaveProperty('archived');
  });

  it('leaves payload and result out for a capability that turned archiving them off', () => {
    const point = archivePointOf('t-2', { ...completed, capability: 'kyc' }, [], [], settings);
    const record = JSON.parse(point?.record ?? '') as Record<string, unknown>;
    expect(point?.tenant).toBe('');
    expect(record).not.toHaveProperty('payload');
    expect(record).not.toHaveProperty('result');
  });

  it('cuts long values and marks them, and keeps the record within what InfluxDB stores', () => {
    const long = JSON.stringify({ text: 'y'.repeat(50_000) });
    const point = archivePointOf(
      't-3',
      { ...completed, payload: long, result: long, error: 'e'.repeat(20_000) },
      [],
      [],
      settings,
    );
    expect(point?.payload_cut).toBe(true);
    expect(point?.result_cut).toBe(true);
    expect(Buffer.byteLength(point?.record ?? '')).toBeLessThanOrEqual(MAX_ARCHIVE_RECORD_BYTES);
    const record = JSON.parse(point?.record ?? '') as Record<string, unknown>;
    expect(typeof record.payload).toBe('string');
    expect(long.startsWith(record.payload as string)).toBe(true);
    expect(record.result_cut).toBe(true);
  });

  it('archives nothing for a task that is not final', () => {
    expect(archivePointOf('t-4', { ...completed, status: 'retry_wait' }, [], [], settings)).toBe(
      undefined,
    );
  });
});

describe('the parts', () => {
  it('takes the end of each final status', () => {
    expect(endOf({ status: 'dead', deadAt: 5 })).toBe(5);
    expect(endOf({ status: 'cancelled', cancelledAt: 7 })).toBe(7);
    expect(endOf({ status: 'sent' })).toBeUndefined();
  });

  it('reads the per-capability setting from its own keys only', () => {
    expect(archivesPayloads(settings, 'kyc')).toBe(false);
    expect(archivesPayloads(settings, 'echo')).toBe(true);
    expect(archivesPayloads(settings, 'toString')).toBe(true);
    expect(archivesPayloads({ ...settings, archivePayloads: false }, 'echo')).toBe(false);
  });

  it('finds the last failure code', () => {
    expect(lastErrorCode([failedLine, '{"stage":"retried"}', 'not json'])).toBe('MODEL_NOT_LOADED');
    expect(lastErrorCode([])).toBe('');
  });
});
