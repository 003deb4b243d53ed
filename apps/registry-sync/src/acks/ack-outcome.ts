import type { ScriptRefusal } from '@agent-reach/protocol';

/**
 * Why an ack changed nothing (counted as `acks_refused:<reason>`): a script's refusal, an entry
 * that does not decode, or (signed acks required) one without a valid signature (`bad_signature`).
 * `not_eligible`: a pull agent reported a pooled task it may not
 * take (its region or tags do not meet the task's). `duplicate`: the stage was applied already or
 * the task is final (the scripts' `already_final`); the counter keeps the name docs/PROTOCOL.md
 * gives it.
 */
export type AckRefusal =
  | 'malformed'
  | 'bad_signature'
  | 'duplicate'
  | Extract<
      ScriptRefusal,
      'unknown_agent' | 'stale_epoch' | 'unknown_task' | 'not_assigned' | 'not_eligible'
    >;

/** The ack's refusal for a script's: `already_final` is counted as `duplicate`. */
export function ackRefusalOf(
  refusal: Exclude<AckRefusal, 'duplicate'> | 'already_final',
): AckRefusal {
  return refusal === 'already_final' ? 'duplicate' : refusal;
}

/** Outcome of applying one ack entry. */
export type AckOutcome = { applied: true; final: boolean } | { applied: false; reason: AckRefusal };
