import { readFileSync, readdirSync } from 'node:fs';
import type { RedisClient } from './redis-connection.ts';

/**
 * Defines every `<name>-<numKeys>.lua` file in `dir` on the connection as the command
 * `names[name]` (ioredis `defineCommand`, which already falls back from EVALSHA to EVAL), or only
 * those named in `only`. `<name>-n.lua` takes a varying number of keys: its caller passes the count
 * first. A script without a name in `names`, or a name in `only` without a script, is a mistake
 * and throws.
 *
 * Why `only`: ioredis copies every script defined on a connection onto each pipeline it makes, and
 * with auto-pipelining that is one pipeline per event-loop turn — about 20 µs for 25 scripts, as
 * much as the commands it carries when they are few. A hot path gets a connection of its own with
 * the few scripts it runs.
 */
export function defineScripts(
  redis: RedisClient,
  dir: string,
  names: Readonly<Record<string, string>>,
  only?: readonly string[],
): void {
  const wanted = only ? new Set(only) : undefined;
  for (const file of readdirSync(dir)) {
    const match = /^(.+)-(\d+|n)\.lua$/.exec(file);
    if (!match) continue;
    const base = match[1] as string;
    const name = names[base];
    if (!name) throw new Error(`script ${file} has no command name`);
    if (wanted && !wanted.delete(base)) continue;
    const lua = readFileSync(`${dir}/${file}`, 'utf8');
    redis.defineCommand(name, match[2] === 'n' ? { lua } : { numberOfKeys: Number(match[2]), lua });
  }
  if (wanted && wanted.size > 0)
    throw new Error(`no script for ${[...wanted].join(', ')} in ${dir}`);
}
