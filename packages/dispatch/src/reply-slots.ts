/**
 * Readers of a script's reply for the decoders beside each script's definition: a reply or slot
 * of another shape throws a {@link ScriptReplyError} naming the script, so a script and its
 * decoder that drift apart fail loudly instead of reading garbage.
 */
import { ScriptReplyError } from '@agent-reach/protocol';

/** The reply as a list of slots. */
export function slots(script: string, raw: unknown): readonly unknown[] {
  if (!Array.isArray(raw)) throw new ScriptReplyError(script, raw, 'not an array');
  return raw as unknown[];
}

/** Slot `at` (0-based) of `list`, an integer. */
export function int(script: string, raw: unknown, list: readonly unknown[], at: number): number {
  const value = list[at];
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new ScriptReplyError(script, raw, `slot ${at + 1} is not an integer`);
  return value;
}

/** An integer slot the script may leave empty (a hash field that does not exist): 0 then. */
export function count(script: string, raw: unknown, list: readonly unknown[], at: number): number {
  const value = list[at];
  return value === null || value === undefined ? 0 : int(script, raw, list, at);
}

/** A string slot the script may leave empty (a hash field that does not exist): '' then. */
export function text(script: string, raw: unknown, list: readonly unknown[], at: number): string {
  const value = list[at];
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string')
    throw new ScriptReplyError(script, raw, `slot ${at + 1} is not a string`);
  return value;
}

/** A reply that is one of the integers `codes`. */
export function oneOf<C extends number>(script: string, raw: unknown, codes: readonly C[]): C {
  if (!(codes as readonly unknown[]).includes(raw))
    throw new ScriptReplyError(script, raw, `not one of ${codes.join(', ')}`);
  return raw as C;
}
