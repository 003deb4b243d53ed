import { describe, expect, it } from 'vitest';
import { decodeAck, decodeTask, encodeAck, encodeTask, type TaskMessage } from './codecs.ts';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const task: TaskMessage = {
  task_id: 't-1',
  capability: 'echo',
  payload: '{}',
  attempt: 1,
  trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
  callback_topic: '',
  deadline_ms: 0,
};

describe('the traceparent field of task and ack entries', () => {
  it('is left out when the sender traces nothing, and read back when given', () => {
    expect(encodeTask(task)).not.toContain('traceparent');
    const traced = { ...task, traceparent: TP };
    expect(decodeTask(encodeTask(traced))).toEqual({ ok: true, value: traced });
  });

  it('is ignored, not refused, when it is not a W3C traceparent', () => {
    const fields = [...encodeTask(task), 'traceparent', 'not-a-traceparent'];
    expect(decodeTask(fields)).toEqual({ ok: true, value: task });
  });

  it('rides a completion back', () => {
    const ack = {
      task_id: 't-1',
      stage: 'completed' as const,
      agent_id: 'a-1',
      instance_id: 'i-1',
      epoch: 1,
      attempt: 1,
      result: '1',
      traceparent: TP,
    };
    const decoded = decodeAck(encodeAck(ack));
    expect(decoded.ok && decoded.value.traceparent).toBe(TP);
    const bad = decodeAck([...encodeAck({ ...ack, traceparent: undefined }), 'traceparent', 'x']);
    expect(bad.ok && bad.value.traceparent).toBeUndefined();
  });
});
