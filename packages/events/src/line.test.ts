import { describe, expect, it } from 'vitest';
import { eventToLine, isInvalidTaskEventError } from './line.ts';
import { MAX_REASON_CHARS, type TaskEvent } from './types.ts';

const base: TaskEvent = {
  stage: 'sent',
  capability: 'echo',
  agent_id: 'agent-1',
  task_id: 't-1',
  attempt: 1,
  at: 1_700_000_000_123,
};

describe('eventToLine', () => {
  it('puts stage, capability and agent_id in tags and task_id in a string field, at ns precision', () => {
    expect(eventToLine(base)).toMatch(
      /^reach_task_events,agent_id=agent-1,capability=echo,stage=sent attempt=1i,task_id="t-1" 1700000000123\d{6}$/,
    );
  });

  it('tags a priority above 0 and writes fallback_for as a string field', () => {
    const line = eventToLine({ ...base, capability: 'lite', priority: 7, fallback_for: 'full' });
    expect(line).toMatch(
      /^reach_task_events,agent_id=agent-1,capability=lite,priority=7,stage=sent /,
    );
    expect(line).toContain('fallback_for="full"');
    expect(eventToLine({ ...base, priority: 0 })).not.toContain('priority');
  });

  it('gives two events of the same millisecond, stage, capability and agent distinct times', () => {
    const time = (line: string) => line.slice(line.lastIndexOf(' ') + 1);
    const a = eventToLine(base);
    const b = eventToLine({ ...base, task_id: 't-2' });
    expect(time(a).slice(0, 13)).toBe('1700000000123');
    expect(time(b).slice(0, 13)).toBe('1700000000123');
    expect(time(a)).not.toBe(time(b));
  });

  it('writes latency_ms and duration_ms as floats, and the optional strings, only when given', () => {
    const line = eventToLine({
      ...base,
      stage: 'completed',
      latency_ms: 12,
      duration_ms: 3.5,
      trace_id: 'tr',
      reason: 'ok',
    });
    expect(line).toContain(
      ' attempt=1i,duration_ms=3.5,latency_ms=12,reason="ok",task_id="t-1",trace_id="tr" ',
    );
    expect(eventToLine(base)).not.toMatch(/latency_ms|duration_ms|trace_id|reason/);
  });

  it('writes a child’s parent_task_id as a string field, only when given', () => {
    expect(eventToLine({ ...base, parent_task_id: 'p-1' })).toContain(
      ' attempt=1i,parent_task_id="p-1",task_id="t-1" ',
    );
    expect(eventToLine(base)).not.toContain('parent_task_id');
  });

  it('leaves out non-finite numbers instead of writing an unparsable line', () => {
    const line = eventToLine({
      ...base,
      latency_ms: Number.NaN,
      duration_ms: Number.POSITIVE_INFINITY,
    });
    expect(line).not.toMatch(/latency_ms|duration_ms/);
  });

  it('escapes tag and string values through the client library', () => {
    const line = eventToLine({
      ...base,
      capability: 'a b,c=d',
      task_id: 'say "hi"\\',
      reason: 'line\nbreak',
    });
    expect(line).toContain('capability=a\\ b\\,c\\=d');
    expect(line).toContain('task_id="say \\"hi\\"\\\\"');
    expect(line).toContain('reason="line\nbreak"');
  });

  it('truncates a fractional timestamp and cuts long reasons', () => {
    const line = eventToLine({
      ...base,
      at: 1_700_000_000_123.9,
      reason: 'x'.repeat(MAX_REASON_CHARS + 50),
    });
    expect(line).toMatch(/ 1700000000123\d{6}$/);
    expect(line).toContain(`reason="${'x'.repeat(MAX_REASON_CHARS)}"`);
  });

  it.each([
    ['stage', { stage: 'bogus' }],
    ['capability', { capability: '' }],
    ['agent_id', { agent_id: undefined }],
    ['task_id', { task_id: 42 }],
    ['attempt', { attempt: 1.5 }],
    ['attempt', { attempt: -1 }],
    ['at', { at: Number.NaN }],
  ])('rejects a bad %s with InvalidTaskEventError', (field, patch) => {
    const bad = { ...base, ...patch } as unknown as TaskEvent;
    let caught: unknown;
    try {
      eventToLine(bad);
    } catch (err) {
      caught = err;
    }
    expect(isInvalidTaskEventError(caught)).toBe(true);
    expect((caught as { field: string }).field).toBe(field);
  });
});
