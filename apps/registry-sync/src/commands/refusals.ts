/**
 * The one map from the negative codes this service's scripts answer to typed refusals. A code
 * means the same in every script that answers it (retry-2.lua answers -1, -6 and -7 with these
 * meanings too); -4, -8 and -9 are left out because the dispatch package's scripts give them
 * other meanings (no free slot, held by someone else, not dead). Codes are never reused with
 * another meaning.
 */
export const REFUSAL_CODES = {
  [-1]: 'unknown_task',
  [-2]: 'stale_epoch',
  [-3]: 'wrong_token',
  [-5]: 'unknown_agent',
  [-6]: 'not_assigned',
  [-7]: 'duplicate',
  [-10]: 'not_eligible',
  [-11]: 'other_tenant',
} as const;

/** Why a script changed nothing. */
export type ScriptRefusal = (typeof REFUSAL_CODES)[keyof typeof REFUSAL_CODES];

/** A script answered something its decoder does not know: the script and its decoder are out of step. */
export class ScriptReplyError extends Error {
  override readonly name = 'ScriptReplyError';

  constructor(
    readonly script: string,
    readonly reply: unknown,
    problem: string,
  ) {
    super(`${script}: ${problem} in reply ${JSON.stringify(reply)}`);
  }
}

/** True for a {@link ScriptReplyError}. */
export function isScriptReplyError(err: unknown): err is ScriptReplyError {
  return err instanceof ScriptReplyError;
}

/** A refusal of one of the kinds `R`. */
export interface Refused<R extends ScriptRefusal> {
  ok: false;
  refusal: R;
}

/** A script's decoded reply: its named fields, or a refusal of one of the kinds it answers. */
export type Reply<T, R extends ScriptRefusal> = ({ ok: true } & T) | Refused<R>;

/** The refusal `code` stands for, which must be one of `allowed` for `script`. */
export function refusalOf<R extends ScriptRefusal>(
  script: string,
  code: number,
  allowed: readonly R[],
  reply: unknown,
): R {
  const refusal = (REFUSAL_CODES as Record<number, ScriptRefusal | undefined>)[code];
  if (refusal === undefined || !(allowed as readonly ScriptRefusal[]).includes(refusal))
    throw new ScriptReplyError(script, reply, `unknown code ${code}`);
  return refusal as R;
}
