import { describe, expect, it } from 'vitest';
import { decodeTask, encodeTask } from './codecs.ts';
import { checkShadowSettings, compareResults, jsonEqual, shadowPicked } from './shadow.ts';

describe('shadow traffic', () => {
  it('picks a share of task ids near its rate, the same way every time', () => {
    const ids = Array.from({ length: 4000 }, (_, i) => `task-${i}`);
    const picked = ids.filter((id) => shadowPicked(id, 0.5)).length;
    expect(picked / ids.length).toBeGreaterThan(0.46);
    expect(picked / ids.length).toBeLessThan(0.54);
    expect(ids.filter((id) => shadowPicked(id, 0.1)).length / ids.length).toBeLessThan(0.13);
    expect(ids.every((id) => shadowPicked(id, 0.5) === shadowPicked(id, 0.5))).toBe(true);
    expect(ids.some((id) => shadowPicked(id, 0))).toBe(false);
    expect(ids.every((id) => shadowPicked(id, 1))).toBe(true);
  });

  it('compares results whole, by paths, or all but ignored paths', () => {
    const a = { answer: 42, meta: { model: 'm1', ms: 10 }, items: [{ id: 1 }, { id: 2 }] };
    const b = { meta: { ms: 99, model: 'm1' }, answer: 42, items: [{ id: 1 }, { id: 3 }] };
    expect(jsonEqual({ x: 1, y: [1, 2] }, { y: [1, 2], x: 1 })).toBe(true);
    expect(compareResults(a, b)).toEqual({ agree: false, differing: [] });
    expect(compareResults(a, b, { paths: ['answer', 'meta.model'] })).toEqual({
      agree: true,
      differing: [],
    });
    expect(compareResults(a, b, { paths: ['answer', 'items.1.id'] })).toEqual({
      agree: false,
      differing: ['items.1.id'],
    });
    expect(compareResults(a, b, { ignore: ['meta.ms', 'items'] }).agree).toBe(true);
    expect(compareResults(a, b, { ignore: ['meta.ms'] }).agree).toBe(false);
  });

  it('checks operator settings with errors that name the field', () => {
    expect(checkShadowSettings({ rate: 0.5 })).toEqual({ ok: true, value: { rate: 0.5 } });
    expect(checkShadowSettings({ rate: 2 })).toMatchObject({ ok: false, error: /rate/ });
    expect(checkShadowSettings({ rate: 0.1, compare: { paths: ['a b'] } })).toMatchObject({
      ok: false,
      error: /compare.paths/,
    });
    expect(
      checkShadowSettings({ rate: 0.1, compare: { paths: ['a'], ignore: ['b'] } }),
    ).toMatchObject({ ok: false, error: /not both/ });
  });

  it('marks a shadow copy on its entry, and only it', () => {
    const task = {
      task_id: 't1',
      capability: 'chat',
      payload: '{}',
      attempt: 1,
      trace_id: '',
      callback_topic: '',
      deadline_ms: 0,
    };
    const plain = decodeTask(encodeTask(task));
    expect(plain.ok && plain.value.shadow).toBeUndefined();
    const copy = decodeTask(encodeTask({ ...task, shadow: true }));
    expect(copy.ok && copy.value.shadow).toBe(true);
  });
});
