import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { defineScript, loadScripts } from './script-def.ts';
import { parseScriptHeader, scriptFolderProblems, scriptHeaderProblems } from './script-header.ts';
import { expandLuaIncludes } from './lua-includes.ts';

const dir = mkdtempSync(join(tmpdir(), 'script-def-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function lua(file: string, header: string): URL {
  const path = join(dir, file);
  writeFileSync(path, `--[[\n${header}\n]]\nreturn 1\n`);
  return pathToFileURL(path);
}

const MOVE = lua(
  'move-2.lua',
  `  Moves a thing, which is described "as of ARGV[2]" in this sentence.
  KEYS[1] task: the task hash   KEYS[2] timeline: its list
  ARGV[1] attempt: the expected attempt   ARGV[2] reason: why
  ARGV[3..] tasks, per task: epoch taskId`,
);

const move = defineScript({
  lua: MOVE,
  command: 'reachMoveTest',
  keys: ['task', 'timeline'],
  args: ['attempt', 'reason'],
  each: { name: 'tasks', fields: ['epoch', 'taskId'] },
  decode: (raw) => Number(raw),
});

describe('defineScript', () => {
  it('lays out a call by name in the order of the header', () => {
    expect(
      move.argv({
        keys: { timeline: 'k:l', task: 'k:t' },
        args: { reason: 'failed', attempt: 2 },
        items: [
          { taskId: 'a', epoch: 1 },
          { taskId: 'b', epoch: 3 },
        ],
      }),
    ).toEqual(['k:t', 'k:l', 2, 'failed', 1, 'a', 3, 'b']);
  });

  it('passes the key count first for an -n script', () => {
    const publish = defineScript({
      lua: lua('publish-n.lua', '  KEYS[1] topic: x   KEYS[2..] marks: y\n  ARGV[1] ttl: z'),
      command: 'reachPublishTest',
      keys: ['topic'],
      moreKeys: 'marks',
      args: ['ttl'],
      decode: (raw) => raw,
    });
    expect(publish.numberOfKeys).toBe('n');
    expect(
      publish.argv({ keys: { topic: 't' }, moreKeys: ['m1', 'm2'], args: { ttl: 9 } }),
    ).toEqual([3, 't', 'm1', 'm2', 9]);
    expect(scriptHeaderProblems(publish)).toEqual([]);
  });

  it('passes the list an item ends with after its fields: its length, then its values', () => {
    const deliver = defineScript({
      lua: lua(
        'deliver-1.lua',
        '  KEYS[1] inbox: x\n  ARGV[1] bound: y\n  ARGV[2..] tasks, per task: taskId, then entry: its fields',
      ),
      command: 'reachDeliverTest',
      keys: ['inbox'],
      args: ['bound'],
      each: { name: 'tasks', fields: ['taskId'], list: 'entry' },
      decode: (raw) => raw,
    });
    expect(
      deliver.argv({
        keys: { inbox: 'i' },
        args: { bound: 5 },
        items: [
          { taskId: 'a', entry: ['f', 'v', 'g', 1] },
          { taskId: 'b', entry: [] },
        ],
      }),
    ).toEqual(['i', 5, 'a', 4, 'f', 'v', 'g', 1, 'b', 0]);
    expect(scriptHeaderProblems(deliver)).toEqual([]);
    const unnamed = defineScript({
      ...deliver,
      each: { name: 'tasks', fields: ['taskId'], list: 'values' },
    });
    expect(scriptHeaderProblems(unnamed)).toEqual([
      'deliver-1.lua: ARGV[2..] tasks lists no values (fields taskId, values, in order)',
    ]);
  });

  it('refuses a definition whose key count differs from the file name', () => {
    expect(() =>
      defineScript({
        lua: MOVE,
        command: 'reachMoveTest',
        keys: ['task'],
        args: [],
        decode: (raw) => raw,
      }),
    ).toThrow('1 keys defined, the file name says 2');
  });

  it('says which script is missing from a connection, and defines only the pipelined ones', async () => {
    // Never connected, and refusing to queue: a command fails at once, saying so.
    const redis = new Redis({ lazyConnect: true, enableOfflineQueue: false });
    const call = { keys: { task: 'a', timeline: 'b' }, args: { attempt: 1, reason: 'x' } };
    const queued = defineScript({
      lua: MOVE,
      command: 'reachMoveQueuedTest',
      pipelined: true,
      keys: ['task', 'timeline'],
      args: ['attempt', 'reason'],
      decode: (raw) => raw,
    });
    try {
      await expect(move.run(redis, call)).rejects.toThrow(
        'move-2.lua is not loaded on this connection',
      );
      expect(() => queued.queue(redis.pipeline(), call)).toThrow(
        'move-2.lua is not loaded on this connection',
      );
      loadScripts(redis, [move, queued]);
      // EVALSHA for the one, a command ioredis copies onto every pipeline for the other.
      expect(Object.keys(redis.scriptsSet)).toEqual(['reachMoveQueuedTest']);
      await expect(move.run(redis, call)).rejects.toThrow(/enableOfflineQueue/);
      expect(() => move.queue(redis.pipeline(), call)).toThrow('define it with pipelined: true');
      expect(() => queued.queue(redis.pipeline(), call)).not.toThrow();
    } finally {
      redis.disconnect();
    }
  });
});

describe('script headers', () => {
  it('reads entries, not mentions inside a sentence', () => {
    expect(
      parseScriptHeader(`--[[\n  KEYS[1] task: a   ARGV[1] attempt: counted from ARGV[2]\n]]`).map(
        (e) => `${e.kind}[${e.index}] ${e.name}`,
      ),
    ).toEqual(['KEYS[1] task', 'ARGV[1] attempt']);
  });

  it('agree with a definition that matches', () => {
    expect(scriptHeaderProblems(move)).toEqual([]);
  });

  it('find swapped arguments, a missing key and a missing field', () => {
    const swapped = defineScript({
      lua: MOVE,
      command: 'reachMoveTest',
      keys: ['task', 'timeline'],
      args: ['reason', 'attempt'],
      each: { name: 'tasks', fields: ['taskId', 'epoch', 'deadline'] },
      decode: (raw) => raw,
    });
    expect(scriptHeaderProblems(swapped)).toEqual([
      'move-2.lua: header has ARGV[1] attempt, ARGV[2] reason, ARGV[3..] tasks; definition has ARGV[1] reason, ARGV[2] attempt, ARGV[3..] tasks',
    ]);
    const noField = defineScript({
      lua: MOVE,
      command: 'reachMoveTest',
      keys: ['task', 'timeline'],
      args: ['attempt', 'reason'],
      each: { name: 'tasks', fields: ['taskId', 'epoch'] },
      decode: (raw) => raw,
    });
    expect(scriptHeaderProblems(noField)).toEqual([
      'move-2.lua: ARGV[3..] tasks lists no epoch (fields taskId, epoch, in order)',
    ]);
  });
});

describe('a folder of scripts', () => {
  it('has one definition per file, of files that exist, with headers that agree', async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const write = (file: string, text: string) => writeFileSync(join(folder, file), text);
    write('one-1.lua', '--[[\n  KEYS[1] task: x\n]]\nreturn 1\n');
    write('two-1.lua', '--[[\n  KEYS[1] task: x\n]]\nreturn 1\n');
    write('three-1.lua', '--[[\n  KEYS[1] agent: x\n]]\nreturn 1\n');
    const def = (name: string, key: string) =>
      `{ lua: new URL('./${name}-1.lua', import.meta.url), command: 'x', keys: ['${key}'], args: [], argv() { return []; } }`;
    write('one.mjs', `export const one = ${def('one', 'task')};\nexport const again = one;\n`);
    write(
      'two.mjs',
      `export const a = ${def('two', 'task')};\nexport const b = ${def('two', 'task')};\n`,
    );
    write('three.mjs', `export const three = ${def('three', 'task')};\n`);
    write('four.mjs', `export const four = ${def('four', 'task')};\nexport const n = 4;\n`);
    write('one.test.mjs', `export const skipped = ${def('one', 'task')};\n`);
    expect((await scriptFolderProblems(pathToFileURL(`${folder}/`))).sort()).toEqual([
      'four-1.lua: defined, but there is no such file',
      'three-1.lua: header has KEYS[1] agent; definition has KEYS[1] task',
      'two-1.lua: 2 definitions',
    ]);
  });
});

describe('Lua includes', () => {
  it('writes the final-status test from the TypeScript list of final statuses', () => {
    const lua = expandLuaIncludes(
      '--#include is-final\nif is_final(s) then return -7 end',
      'x.lua',
    );
    expect(lua).toContain(
      "return status == 'completed' or status == 'dead' or status == 'cancelled'",
    );
    expect(lua).not.toContain('#include');
  });

  it('refuses an include it does not know', () => {
    expect(() => expandLuaIncludes('--#include nope', 'x.lua')).toThrow(
      'x.lua: no Lua include named nope',
    );
  });
});
