/**
 * Identifier rules shared by every component. Braces are excluded on purpose: an id is embedded
 * in Redis keys inside a `{hash tag}`, and a brace in the id would let a caller choose the slot.
 */
export const ID_PATTERN = '^[A-Za-z0-9_.:-]{1,128}$';

const idRegExp = new RegExp(ID_PATTERN);

/** True when `value` is a valid task, agent, instance, capability or topic id. */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && idRegExp.test(value);
}
