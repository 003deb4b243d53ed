/**
 * Readers of the slots of a script's reply, for the decoders beside each script's definition: a
 * slot of the wrong type throws a {@link ScriptReplyError} naming the script, so a script and its
 * decoder that drift apart fail loudly instead of reading garbage.
 */
import { refusalOf, ScriptReplyError, type Refused } from '@agent-reach/protocol';

/** The reply as a list of slots. */
export function list(script: string, raw: unknown): unknown[] {
  if (!Array.isArray(raw)) throw new ScriptReplyError(script, raw, 'not an array');
  return raw as unknown[];
}

/** `value`, which must be an integer (`what` names it in the error). */
export function asInt(script: string, raw: unknown, value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new ScriptReplyError(script, raw, `${what} is not an integer`);
  return value;
}

/** Slot `at` (0-based), an integer. */
export function int(script: string, raw: unknown, at: number): number {
  return asInt(script, raw, list(script, raw)[at], `slot ${at + 1}`);
}

/** Slot `at`, a string. */
export function str(script: string, raw: unknown, at: number): string {
  const value = list(script, raw)[at];
  if (typeof value !== 'string')
    throw new ScriptReplyError(script, raw, `slot ${at + 1} is not a string`);
  return value;
}

/** An integer slot a script may leave empty (a field of a hash that lacks it): 0 then. */
export function count(script: string, raw: unknown, at: number): number {
  const value = list(script, raw)[at];
  return value === null || value === undefined ? 0 : asInt(script, raw, value, `slot ${at + 1}`);
}

/** A string slot a script may leave empty: a hash field it read that does not exist is nil. */
export function text(script: string, raw: unknown, at: number): string {
  const value = list(script, raw)[at];
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string')
    throw new ScriptReplyError(script, raw, `slot ${at + 1} is not a string`);
  return value;
}

/** A reply of 0 or 1, as a boolean. */
export function flag(script: string, raw: unknown): boolean {
  if (raw !== 0 && raw !== 1) throw new ScriptReplyError(script, raw, 'not 0 or 1');
  return raw === 1;
}

/** Slot `at`, a JSON array of strings; anything else reads as an empty list. */
export function jsonList(script: string, raw: unknown, at: number): string[] {
  let value: unknown;
  try {
    value = JSON.parse(str(script, raw, at));
  } catch {
    value = undefined;
  }
  // The agent record holds what register-3.lua wrote from a checked body: a bad one offers nothing.
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The refusals of the token-checked agent scripts (heartbeat, deregister, serve). */
export type AgentAuthRefusal =
  Refused<'unknown_agent' | 'wrong_token'> | (Refused<'stale_epoch'> & { currentEpoch: number });

/** Decodes a token-checked script's refusal: `{ -5 }`, `{ -2, current epoch }` or `{ -3 }`. */
export function agentAuthRefusal(script: string, raw: unknown): AgentAuthRefusal {
  const refusal = refusalOf(
    script,
    int(script, raw, 0),
    ['unknown_agent', 'stale_epoch', 'wrong_token'],
    raw,
  );
  if (refusal === 'stale_epoch') return { ok: false, refusal, currentEpoch: int(script, raw, 1) };
  return { ok: false, refusal };
}
