import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { defineScripts } from './scripts.ts';

const NAMES = { alpha: 'reachAlpha', beta: 'reachBeta', gamma: 'reachGamma' };

const dirs: string[] = [];
const conns: Redis[] = [];

/** A folder of scripts and a connection that never connects (defining a script needs none). */
function setup(files: string[]): { redis: Redis; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'scripts-'));
  dirs.push(dir);
  for (const f of files) writeFileSync(join(dir, f), 'return 1');
  const redis = new Redis({ lazyConnect: true });
  conns.push(redis);
  return { redis, dir };
}

const defined = (redis: Redis) => Object.keys(redis.scriptsSet).sort();

afterEach(() => {
  for (const c of conns.splice(0)) c.disconnect();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('defineScripts', () => {
  it('defines every script of the folder, by its command name', () => {
    const { redis, dir } = setup(['alpha-1.lua', 'beta-2.lua', 'gamma-n.lua', 'README.md']);
    defineScripts(redis, dir, NAMES);
    expect(defined(redis)).toEqual(['reachAlpha', 'reachBeta', 'reachGamma']);
  });

  it('defines only the scripts named, so a hot connection carries few', () => {
    const { redis, dir } = setup(['alpha-1.lua', 'beta-2.lua', 'gamma-n.lua']);
    defineScripts(redis, dir, NAMES, ['beta', 'gamma']);
    expect(defined(redis)).toEqual(['reachBeta', 'reachGamma']);
  });

  it('throws for a script without a command name, and for a name without a script', () => {
    const unnamed = setup(['alpha-1.lua', 'delta-1.lua']);
    expect(() => defineScripts(unnamed.redis, unnamed.dir, NAMES)).toThrow(
      /delta-1.lua has no command name/,
    );
    const missing = setup(['alpha-1.lua']);
    expect(() => defineScripts(missing.redis, missing.dir, NAMES, ['alpha', 'beta'])).toThrow(
      /no script for beta/,
    );
  });
});
