import { describe, expect, it } from 'vitest';
import {
  archivedTaskToLine,
  archiveNanos,
  cutJsonText,
  decodeArchivedTaskRow,
  isInvalidArchivedTaskError,
  utf8Prefix,
  type ArchivedTaskPoint,
} from './archive.ts';

const base: ArchivedTaskPoint = {
  tenant: 'acme',
  capability: 'echo',
  agent_id: 'gpu-7',
  status: 'completed',
  task_id: 'acme/t-1',
  attempts: 2,
  created_at_ms: 1_700_000_000_000,
  ended_at_ms: 1_700_000_000_250,
  duration_ms: 250,
  error_code: '',
  parent_task_id: '',
  record: '{"task_id":"t-1","note":"a \\"quoted\\" value"}',
  payload_cut: false,
  result_cut: true,
};

describe('archivedTaskToLine', () => {
  it('tags tenant, capability, agent_id and status and writes the rest as fields at the end time', () => {
    const line = archivedTaskToLine(base);
    expect(line).toMatch(
      /^task_archive,agent_id=gpu-7,capability=echo,status=completed,tenant=acme /,
    );
    expect(line).toContain('task_id="acme/t-1"');
    expect(line).toContain('attempts=2i');
    expect(line).toContain('duration_ms=250i');
    expect(line).toContain('payload_cut=F');
    expect(line).toContain('result_cut=T');
    expect(line).toContain('record="{\\"task_id\\":\\"t-1\\",\\"note\\":\\"a \\\\\\"quoted');
    expect(line.slice(line.lastIndexOf(' ') + 1)).toBe(archiveNanos(base));
    expect(archiveNanos(base).slice(0, 13)).toBe('1700000000250');
  });

  it('leaves the tenant and agent_id tags out when empty', () => {
    const line = archivedTaskToLine({ ...base, tenant: '', agent_id: '', task_id: 't-1' });
    expect(line).toMatch(/^task_archive,capability=echo,status=completed /);
  });

  it('gives two tasks ending in the same millisecond distinct times, and one task the same', () => {
    expect(archiveNanos(base)).not.toBe(archiveNanos({ ...base, task_id: 'acme/t-2' }));
    expect(archiveNanos(base)).toBe(archiveNanos({ ...base }));
  });

  it('refuses a point without capability, status or task_id, or with a bad number', () => {
    for (const bad of [
      { ...base, capability: '' },
      { ...base, status: '' },
      { ...base, task_id: '' },
      { ...base, attempts: -1 },
      { ...base, ended_at_ms: Number.NaN },
    ]) {
      let caught: unknown;
      try {
        archivedTaskToLine(bad);
      } catch (err: unknown) {
        caught = err;
      }
      expect(isInvalidArchivedTaskError(caught)).toBe(true);
    }
  });
});

describe('decodeArchivedTaskRow', () => {
  it('reads a row as InfluxQL returns it, a missing tag as empty', () => {
    const row = {
      time: 1_700_000_000_250,
      agent_id: null,
      attempts: 1,
      capability: 'echo',
      created_at_ms: 1_700_000_000_000,
      duration_ms: 250,
      ended_at_ms: 1_700_000_000_250,
      error_code: 'MODEL_NOT_LOADED',
      parent_task_id: 'p-1',
      payload_cut: true,
      record: '{}',
      result_cut: false,
      status: 'dead',
      task_id: 't-1',
      tenant: null,
    };
    expect(decodeArchivedTaskRow(row)).toEqual({
      tenant: '',
      capability: 'echo',
      agent_id: '',
      status: 'dead',
      task_id: 't-1',
      attempts: 1,
      created_at_ms: 1_700_000_000_000,
      ended_at_ms: 1_700_000_000_250,
      duration_ms: 250,
      error_code: 'MODEL_NOT_LOADED',
      parent_task_id: 'p-1',
      record: '{}',
      payload_cut: true,
      result_cut: false,
    });
  });

  it('takes the end time from `time` when the field is missing, and refuses rows of something else', () => {
    expect(
      decodeArchivedTaskRow({ time: 5, capability: 'c', status: 'dead', task_id: 't' })
        ?.ended_at_ms,
    ).toBe(5);
    expect(decodeArchivedTaskRow({ time: 5, stage: 'sent', task_id: 't' })).toBeUndefined();
  });
});

describe('cutting', () => {
  it('keeps a value that fits, parsed', () => {
    expect(cutJsonText('{"a":[1,2]}', 100)).toEqual({ value: { a: [1, 2] }, cut: false });
    expect(cutJsonText('not json', 100)).toEqual({ value: 'not json', cut: false });
  });

  it('cuts a long value to its first bytes as a string, marked', () => {
    const json = JSON.stringify({ text: 'x'.repeat(100) });
    const cut = cutJsonText(json, 40);
    expect(cut.cut).toBe(true);
    expect(cut.value).toBe(json.slice(0, 40));
  });

  it('never splits a character', () => {
    const s = 'aé€😀';
    expect(utf8Prefix(s, 2)).toBe('a');
    expect(utf8Prefix(s, 3)).toBe('aé');
    expect(utf8Prefix(s, 5)).toBe('aé');
    expect(utf8Prefix(s, 6)).toBe('aé€');
    expect(utf8Prefix(s, 10)).toBe(s);
  });
});
