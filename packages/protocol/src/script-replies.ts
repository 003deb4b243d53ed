/**
 * The one map of the negative codes Agent-Reach's Lua scripts answer, for every script in every
 * package: each number has one meaning, and a number is never given another. A script's header
 * lists the codes it answers; its decoder names the ones it expects (`refusalOf`), and a code it
 * does not expect throws `ScriptReplyError` — the script and its decoder are out of step.
 */
export const REPLY_CODES = {
  [-1]: 'unknown_task',
  [-2]: 'stale_epoch',
  [-3]: 'wrong_token',
  [-4]: 'full',
  [-5]: 'unknown_agent',
  [-6]: 'not_assigned',
  [-7]: 'already_final',
  [-8]: 'held_elsewhere',
  [-9]: 'not_dead',
  [-10]: 'not_eligible',
  [-11]: 'other_tenant',
  [-12]: 'not_live',
  [-13]: 'not_cancelled',
} as const;

/** Why a script changed nothing: a value of {@link REPLY_CODES}. */
export type ScriptRefusal = (typeof REPLY_CODES)[keyof typeof REPLY_CODES];

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

/** The refusal `code` stands for, which must be one of `allowed` for `script`; anything else throws. */
export function refusalOf<R extends ScriptRefusal>(
  script: string,
  code: number,
  allowed: readonly R[],
  reply: unknown,
): R {
  const refusal = (REPLY_CODES as Record<number, ScriptRefusal | undefined>)[code];
  if (refusal === undefined || !(allowed as readonly ScriptRefusal[]).includes(refusal))
    throw new ScriptReplyError(script, reply, `unknown code ${code}`);
  return refusal as R;
}
