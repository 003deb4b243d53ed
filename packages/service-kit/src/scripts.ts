import { readFileSync, readdirSync } from 'node:fs';
import type { Redis } from 'ioredis';

/**
 * Defines every `<name>-<numKeys>.lua` file in `dir` on the connection as the command
 * `names[name]` (ioredis `defineCommand`, which already falls back from EVALSHA to EVAL).
 * `<name>-n.lua` takes a varying number of keys: its caller passes the count first.
 * A script without a name in `names` is a mistake and throws.
 */
export function defineScripts(redis: Redis, dir: string, names: Readonly<Record<string, string>>): void {
  for (const file of readdirSync(dir)) {
    const match = /^(.+)-(\d+|n)\.lua$/.exec(file);
    if (!match) continue;
    const name = names[match[1] as string];
    if (!name) throw new Error(`script ${file} has no command name`);
    const lua = readFileSync(`${dir}/${file}`, 'utf8');
    redis.defineCommand(name, match[2] === 'n' ? { lua } : { numberOfKeys: Number(match[2]), lua });
  }
}
