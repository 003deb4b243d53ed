import { describe, expect, it } from 'vitest';
import { childTaskBody, type ChildTaskRequest } from './child-task.ts';

describe('childTaskBody', () => {
  it('sets parent_task_id and trace_id from the parent, over anything the request says', () => {
    const forged = {
      capability: 'c',
      payload: 1,
      parent_task_id: 'other',
      trace_id: 'forged',
    } as ChildTaskRequest;
    expect(childTaskBody(forged, { task_id: 'p', trace_id: 't' })).toEqual({
      capability: 'c',
      payload: 1,
      parent_task_id: 'p',
      trace_id: 't',
    });
  });

  it('leaves trace_id out when the parent has none, and keeps the request’s other fields', () => {
    const req: ChildTaskRequest = {
      task_id: 'k',
      capability: 'c',
      payload: null,
      timeout_s: 5,
      callback_topic: 'mine',
    };
    expect(
      childTaskBody({ ...req, trace_id: 'x' } as ChildTaskRequest, { task_id: 'p', trace_id: '' }),
    ).toEqual({ ...req, parent_task_id: 'p' });
  });
});
