/**
 * Task ids as a JSON-RPC call or an MCP tool names them, above all hostile ones: empty, braces
 * (Redis hash tags), spaces, very long, unicode, control characters, traversal, bad tenants,
 * values that are not strings — beside the ids of tasks the leg seeded, ids no task has, and
 * another tenant's. Each comes with its kind, from which a request knows the answer it is owed.
 */
import fc from 'fast-check';
import { ID_PATTERN, TENANT_PATTERN } from '@agent-reach/protocol';

/**
 * What an id is: a task the leg seeded (`known`), a well-formed id no task has (`unknown`),
 * another tenant's task (`foreign`: unknown to a caller who may not see that tenant), a string
 * that is no task id (`malformed`), or a value that is not a string (`odd`).
 */
export type IdKind = 'known' | 'unknown' | 'foreign' | 'malformed' | 'odd';

/** One generated id and its kind. */
export interface NamedId {
  value: unknown;
  kind: IdKind;
}

/** The ids a leg knows of. */
export interface KnownIds {
  /** Tasks of the leg's own tenant (seeded before the fuzz). */
  own: readonly string[];
  /** Another tenant's tasks as a caller names them (`<tenant>/<id>`, or bare). */
  foreign: readonly string[];
}

/**
 * Where ids no task has come from: nothing the fuzz sends creates a task in this namespace
 * (messages and submissions take their ids from {@link freshTaskId}).
 */
const UNKNOWN_PREFIX = 'fuzz-unknown';

const TENANT_PART = TENANT_PATTERN.slice(1, -1);
const ID_PART = ID_PATTERN.slice(1, -1);
/** A task id as a caller may name one (docs/A2A.md): `[A-Za-z0-9_.:-]{1,128}`, optionally after `<tenant>/`. */
const ID_REF = new RegExp(`^(?:${TENANT_PART}/)?${ID_PART}$`);

/** True when `value` has the form of a task id reference (whether or not the task exists). */
export function isIdRef(value: unknown): boolean {
  return typeof value === 'string' && ID_REF.test(value);
}

/** Strings that are no task id: each breaks the id's form in one way. */
export const MALFORMED_IDS: readonly string[] = [
  '',
  ' ',
  'a{b}',
  '{t:x}',
  '{',
  'x y',
  ' x',
  'x ',
  'a\tb',
  'a\nb',
  'a\u0000b',
  'x'.repeat(129),
  'x'.repeat(200),
  'x'.repeat(10 * 1024),
  'é',
  'tâche-1',
  '💩',
  '\u202e1-ksat',
  '\ud800',
  '../x',
  '../../etc/passwd',
  'a/b/c',
  '/x',
  'x/',
  '//',
  'UPPER/x',
  '-t/x',
  `${'t'.repeat(40)}/x`,
  'default/',
  '%7Bx%7D',
  '%2e%2e',
  'a*',
  'a?b=1',
  'a#b',
  'a,b',
  'a;b',
  'a"b',
  "a'b",
  'a\\b',
  'a|b',
  '$',
  '*',
  '<script>',
];

/** Values that are not strings where an id belongs. */
export const ODD_IDS: readonly unknown[] = [
  null,
  0,
  -1,
  1.5,
  5,
  1e308,
  true,
  false,
  [],
  ['x'],
  {},
  { id: 'x' },
  { toString: 'x' },
  [null],
];

/** A well-formed id of a task that does not exist. */
export const unknownTaskId: fc.Arbitrary<string> = fc.oneof(
  fc.nat().map((n) => `${UNKNOWN_PREFIX}-${n}`),
  fc.nat().map((n) => `${UNKNOWN_PREFIX}:${n}.a_b-c`),
  fc.constant(`${UNKNOWN_PREFIX}-`.padEnd(128, 'z')),
  fc.constantFrom(`no-such-tenant/${UNKNOWN_PREFIX}-1`, `default/${UNKNOWN_PREFIX}-2`),
);

/** An id for a task the fuzz creates (a message's id, a submission's): never an unknown one. */
export const freshTaskId: fc.Arbitrary<string> = fc.nat().map((n) => `fuzz-made-${n}`);

/** Any id, hostile ones above all. */
export function taskIdArb(ids: KnownIds): fc.Arbitrary<NamedId> {
  const as =
    (kind: IdKind) =>
    (value: unknown): NamedId => ({ value, kind });
  const arbs: fc.WeightedArbitrary<NamedId>[] = [
    { weight: 6, arbitrary: fc.constantFrom(...MALFORMED_IDS).map(as('malformed')) },
    {
      weight: 2,
      arbitrary: fc
        .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
        .filter((s) => !isIdRef(s))
        .map(as('malformed')),
    },
    { weight: 2, arbitrary: fc.constantFrom(...ODD_IDS).map(as('odd')) },
    { weight: 4, arbitrary: unknownTaskId.map(as('unknown')) },
  ];
  if (ids.own.length > 0)
    arbs.push({ weight: 5, arbitrary: fc.constantFrom(...ids.own).map(as('known')) });
  if (ids.foreign.length > 0)
    arbs.push({ weight: 2, arbitrary: fc.constantFrom(...ids.foreign).map(as('foreign')) });
  return fc.oneof(...arbs);
}
