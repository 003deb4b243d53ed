import { describe, expect, it } from 'vitest';
import { reachKeys } from './keys.ts';
import {
  decodeParked,
  encodeParked,
  ENTRY_LIMITS,
  entryShapeProblem,
  keysOfAcksStream,
  parkedFieldsText,
  PARKED_FIELDS_MAX_CHARS,
} from './parked.ts';

describe('entryShapeProblem', () => {
  it('accepts a protocol entry, with fields it does not know', () => {
    expect(
      entryShapeProblem(['task_id', 't1', 'attempt', '1', 'future_field', 'x']),
    ).toBeUndefined();
  });

  it('names what is wrong with the shape', () => {
    expect(entryShapeProblem(null)).toMatch(/no fields/);
    expect(entryShapeProblem(['task_id'])).toMatch(/odd/);
    expect(entryShapeProblem(['task_id', 'a', 'task_id', 'b'])).toBe('field task_id given twice');
    const many = Array.from({ length: ENTRY_LIMITS.maxFields + 1 }, (_, i) => [
      `f${i}`,
      'v',
    ]).flat();
    expect(entryShapeProblem(many)).toMatch(/more than 64 fields/);
    expect(entryShapeProblem(['n'.repeat(65), 'v'])).toMatch(/field name longer/);
    expect(entryShapeProblem(['payload', 'x'.repeat(ENTRY_LIMITS.maxValueLength + 1)])).toMatch(
      /field payload longer/,
    );
  });
});

describe('parked entries', () => {
  it('round-trip through their field list, the fields cut when long', () => {
    const entry = {
      source: 'pool' as const,
      stream: 'reach:{pool:embed}',
      entry_id: '1-0',
      reason: 'attempt missing or invalid',
      fields: parkedFieldsText(['task_id', 't1']),
      by: 'agent:a1',
    };
    expect(decodeParked(encodeParked(entry))).toEqual(entry);
    const long = parkedFieldsText(['payload', 'x'.repeat(20_000)]);
    expect(long.length).toBeLessThan(PARKED_FIELDS_MAX_CHARS + 40);
    expect(long).toMatch(/…\(\d+ characters\)$/);
  });

  it('are found from an acks stream name, of any shard', () => {
    const keys = reachKeys('t-1', { shards: () => 4 });
    for (const shard of [0, 3])
      expect(keysOfAcksStream(keys.acks(shard))?.parked()).toBe(keys.parked());
    expect(keysOfAcksStream('not-ours')).toBeUndefined();
    expect(keysOfAcksStream('')).toBeUndefined();
  });
});
