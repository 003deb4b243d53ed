import { describe, expect, it } from 'vitest';
import { AckChains, compareIds, taskOf, type AckEntry } from './ack-chains.ts';

const entry = (id: string, task: string, stage = 'received'): AckEntry => [
  id,
  ['task_id', task, 'stage', stage],
];

/** An apply function whose calls finish when the test says so. */
function controlledApply() {
  const started: string[] = [];
  const gates = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  const apply = (id: string) =>
    new Promise<void>((resolve, reject) => {
      started.push(id);
      gates.set(id, { resolve, reject });
    });
  const tick = () => new Promise((r) => setImmediate(r));
  return {
    started,
    apply,
    finish: (id: string) => gates.get(id)?.resolve(),
    fail: (id: string) => gates.get(id)?.reject(new Error('redis went away')),
    tick,
  };
}

describe('AckChains', () => {
  it('applies entries of different tasks at once and those of one task one after the other', async () => {
    const c = controlledApply();
    const applied: string[] = [];
    const chains = new AckChains(c.apply, {
      applied: (id) => applied.push(id),
      failed: () => undefined,
    });
    void chains.add(entry('1-0', 'a'));
    void chains.add(entry('1-1', 'b'));
    void chains.add(entry('1-2', 'a', 'completed'));
    await c.tick();
    expect(c.started).toEqual(['1-0', '1-1']);
    c.finish('1-1');
    await c.tick();
    expect(c.started).toEqual(['1-0', '1-1']);
    c.finish('1-0');
    await c.tick();
    expect(c.started).toEqual(['1-0', '1-1', '1-2']);
    c.finish('1-2');
    await chains.settled();
    expect(applied).toEqual(['1-1', '1-0', '1-2']);
  });

  it('holds a failed entry with the later entries of its task, and hands them back in stream order', async () => {
    const c = controlledApply();
    const failed: string[] = [];
    const chains = new AckChains(c.apply, {
      applied: () => undefined,
      failed: (id) => failed.push(id),
    });
    const first = chains.add(entry('2-0', 'a'));
    const second = chains.add(entry('2-1', 'a', 'completed'));
    const other = chains.add(entry('2-2', 'b'));
    await c.tick();
    c.fail('2-0');
    c.finish('2-2');
    expect(await first).toBe(false);
    expect(await second).toBe(false);
    expect(await other).toBe(true);
    // An entry of the held task read later waits with them too.
    expect(await chains.add(entry('3-0', 'a', 'completed'))).toBe(false);
    expect(c.started).toEqual(['2-0', '2-2']);
    expect(failed).toEqual(['2-0']);
    expect(chains.heldCount).toBe(3);
    expect(chains.takeHeld().map(([id]) => id)).toEqual(['2-0', '2-1', '3-0']);
    expect(chains.heldCount).toBe(0);
  });
});

describe('entry helpers', () => {
  it('orders stream ids numerically and finds the task of an entry', () => {
    expect(['10-0', '9-5', '9-10'].sort(compareIds)).toEqual(['9-5', '9-10', '10-0']);
    expect(taskOf(['agent_id', 'x', 'task_id', 't1'])).toBe('t1');
    expect(taskOf(['agent_id', 'task_id'])).toBe('');
  });
});
