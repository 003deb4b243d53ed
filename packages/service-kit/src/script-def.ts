import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis-connection.ts';
import { expandLuaIncludes } from './lua-includes.ts';
import { sendFlat } from './flat-command.ts';

/** One argument of a script call, as Redis receives it. */
export type ScriptArg = string | number;

/** Values by name: the keys (`string`) or the arguments (`ScriptArg`) of one call. */
export type Named<N extends readonly string[], V> = { readonly [P in N[number]]: V };

/** Arguments repeated once per item after the fixed ones (`ARGV[n..]` in the script's header). */
export interface RepeatedArgs<F extends readonly string[], L extends string = never> {
  /** The group's name, as the header names it (`ARGV[n..] <name>`). */
  readonly name: string;
  /** Each item's fields, in the order the script reads them. */
  readonly fields: F;
  /**
   * A list of values of its own length each item ends with (a stream entry's fields and values),
   * passed after the fields as its length and then the values; the header names it after them.
   */
  readonly list?: L;
}

/** One item of a repeated group: its fields by name, and its list when the group has one. */
export type Item<F extends readonly string[], L extends string = never> = Named<F, ScriptArg> & {
  readonly [P in L]: readonly ScriptArg[];
};

/** What a script definition declares; see {@link defineScript}. */
export interface ScriptSpec<
  K extends readonly string[],
  A extends readonly string[],
  F extends readonly string[],
  R,
  L extends string = never,
> {
  /** The `.lua` file, named `<name>-<number of keys>.lua`, or `<name>-n.lua` with more keys. */
  readonly lua: URL;
  /** The command's name on the connection (ioredis `defineCommand`). */
  readonly command: string;
  /**
   * Queued on pipelines ({@link Script.queue}): also defined on the connection with ioredis
   * `defineCommand`, which loads it before a pipeline that uses it runs. {@link Script.run} runs
   * every script by EVALSHA, sent again as EVAL when Redis answers NOSCRIPT (a restarted or
   * promoted node).
   */
  readonly pipelined?: boolean;
  /** The fixed keys, `KEYS[1]` first. */
  readonly keys: K;
  /** For an `-n` script: the name of the keys past the fixed ones (`KEYS[n..] <name>`). */
  readonly moreKeys?: string;
  /** The fixed arguments, `ARGV[1]` first. */
  readonly args: A;
  /** Arguments repeated per item after the fixed ones. */
  readonly each?: RepeatedArgs<F, L>;
  /**
   * Turns the raw reply into named fields; throws on a reply the script cannot give. A batch
   * script's decoder gets the call's items too (one reply per item).
   */
  readonly decode: (raw: unknown, args: Named<A, ScriptArg>, items?: readonly Item<F, L>[]) => R;
}

/** One call of a script: its keys and arguments by name. */
export interface ScriptCall<
  K extends readonly string[],
  A extends readonly string[],
  F extends readonly string[],
  L extends string = never,
> {
  readonly keys: Named<K, string>;
  readonly args: Named<A, ScriptArg>;
  /** The keys past the fixed ones (`-n` scripts). */
  readonly moreKeys?: readonly string[];
  /** One entry per item of the repeated arguments. */
  readonly items?: readonly Item<F, L>[];
}

/** A script, typed: its calls name their keys and arguments, its replies are decoded beside it. */
export interface Script<
  K extends readonly string[],
  A extends readonly string[],
  F extends readonly string[],
  R,
  L extends string = never,
> extends ScriptSpec<K, A, F, R, L> {
  /** `<name>` of the file. */
  readonly name: string;
  /** The number of fixed keys, or `'n'` when the caller passes the count. */
  readonly numberOfKeys: number | 'n';
  /** Runs the script on `redis` (where {@link loadScripts} defined it) and decodes its reply. */
  run(redis: RedisClient, call: ScriptCall<K, A, F, L>): Promise<R>;
  /** Queues the script on a pipeline; decode its reply with `decode(raw, call.args, call.items)`. */
  queue(pipeline: ChainableCommander, call: ScriptCall<K, A, F, L>): void;
  /** The call as the positional list Redis receives (`-n` scripts: the key count first). */
  argv(call: ScriptCall<K, A, F, L>): ScriptArg[];
}

/** A script of any shape, for lists of scripts. */
export type AnyScript = Script<
  readonly string[],
  readonly string[],
  readonly string[],
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  any,
  string
>;

/** A pipeline's command queues and answers the pipeline. */
type Queue = (...args: ScriptArg[]) => unknown;

/**
 * Declares a script beside its `.lua` file: the names of its keys and arguments, in the order of
 * its header's `KEYS[i]` and `ARGV[i]`, and the decoder of its replies. Callers pass keys and
 * arguments by name; nothing else calls the script's command (a lint rule refuses a positional
 * `redis.reachXxx(...)` call), and a test checks each header against its definition
 * (`scriptHeaderProblems`).
 */
export function defineScript<
  const K extends readonly string[],
  const A extends readonly string[],
  R,
  const F extends readonly string[] = readonly [],
  const L extends string = never,
>(spec: ScriptSpec<K, A, F, R, L>): Script<K, A, F, R, L> {
  const file = basename(fileURLToPath(spec.lua));
  const match = /^(.+)-(\d+|n)\.lua$/.exec(file);
  if (!match) throw new Error(`script file ${file} is not named <name>-<keys>.lua`);
  const numberOfKeys = match[2] === 'n' ? 'n' : Number(match[2]);
  if (numberOfKeys !== 'n' && numberOfKeys !== spec.keys.length)
    throw new Error(
      `${file}: ${spec.keys.length} keys defined, the file name says ${numberOfKeys}`,
    );
  if (numberOfKeys !== 'n' && spec.moreKeys !== undefined)
    throw new Error(`${file}: more keys need a <name>-n.lua file`);

  function argv(call: ScriptCall<K, A, F, L>): ScriptArg[] {
    const out: ScriptArg[] = [];
    const more = call.moreKeys ?? [];
    if (numberOfKeys === 'n') out.push(spec.keys.length + more.length);
    const keys = call.keys as Record<string, string>;
    for (const k of spec.keys) out.push(keys[k] as string);
    for (const k of more) out.push(k);
    const args = call.args as Record<string, ScriptArg>;
    for (const a of spec.args) out.push(args[a] as ScriptArg);
    const fields = spec.each?.fields;
    const list = spec.each?.list;
    if (fields && call.items)
      for (const item of call.items) {
        const values = item as unknown as Record<string, ScriptArg>;
        for (const f of fields) out.push(values[f] as ScriptArg);
        if (list === undefined) continue;
        const tail = (item as unknown as Record<string, readonly ScriptArg[]>)[list] ?? [];
        out.push(tail.length);
        for (const v of tail) out.push(v);
      }
    return out;
  }

  return {
    ...spec,
    name: match[1] as string,
    numberOfKeys,
    argv,
    async run(redis, call) {
      const lua = loaded.get(redis)?.get(spec.command);
      if (!lua) throw new Error(`script ${file} is not loaded on this connection`);
      const args = argv(call);
      if (numberOfKeys !== 'n') args.unshift(numberOfKeys);
      let raw: unknown;
      try {
        raw = await sendFlat(redis, 'evalsha', [lua.sha, ...args]);
      } catch (err: unknown) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        raw = await sendFlat(redis, 'eval', [lua.text, ...args]);
      }
      return spec.decode(raw, call.args, call.items ?? []);
    },
    queue(pipeline, call) {
      if (!spec.pipelined)
        throw new Error(`script ${file} is queued on a pipeline: define it with pipelined: true`);
      const invoke = (pipeline as unknown as Record<string, Queue | undefined>)[spec.command];
      if (!invoke) throw new Error(`script ${file} is not loaded on this connection`);
      invoke.apply(pipeline, argv(call));
    },
  };
}

/** A script's text as Redis runs it, and its SHA1. */
interface LoadedLua {
  text: string;
  sha: string;
}

const luaText = new Map<string, LoadedLua>();
/** Connection → command → the script loaded on it. */
const loaded = new WeakMap<object, Map<string, LoadedLua>>();

/**
 * Loads each script for the connection, its `--#include` lines expanded (`LUA_INCLUDES`): a
 * pipelined one is defined with ioredis `defineCommand`, the others are run by EVALSHA.
 *
 * Why so few are defined: ioredis copies every script defined on a connection onto each pipeline
 * it makes, and with auto-pipelining that is one pipeline per event-loop turn — about 20 µs for
 * 25 scripts, as much as the commands it carries when they are few.
 */
export function loadScripts(redis: RedisClient, scripts: readonly AnyScript[]): void {
  let mine = loaded.get(redis);
  if (!mine) loaded.set(redis, (mine = new Map<string, LoadedLua>()));
  for (const script of scripts) {
    const path = fileURLToPath(script.lua);
    let lua = luaText.get(path);
    if (lua === undefined) {
      const text = expandLuaIncludes(readFileSync(path, 'utf8'), basename(path));
      lua = { text, sha: createHash('sha1').update(text).digest('hex') };
      luaText.set(path, lua);
    }
    mine.set(script.command, lua);
    if (!script.pipelined) continue;
    redis.defineCommand(
      script.command,
      script.numberOfKeys === 'n'
        ? { lua: lua.text }
        : { numberOfKeys: script.numberOfKeys, lua: lua.text },
    );
  }
}
