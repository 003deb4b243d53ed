/**
 * Malformed stream entries set aside (`keys.parked()`): an entry of an inbox, a pool or the acks
 * stream that a Redis client wrote by hand and that no reader can use is skipped, counted and
 * parked here with where it came from and why, so an operator can look at it (docs/OPERATIONS.md).
 */
import { fieldsToRecord, recordToFields } from './codecs.ts';
import { reachKeys, type ReachKeys } from './keys.ts';

/** Where a parked entry was read. */
export type ParkedSource = 'inbox' | 'pool' | 'acks';

/** Approximate cap on the parked stream (XADD MAXLEN ~). */
export const PARKED_MAXLEN = 10_000;

/** How much of a parked entry's fields is kept (their JSON text, cut at this many characters). */
export const PARKED_FIELDS_MAX_CHARS = 8192;

/**
 * Bounds on one stream entry written by anything but Agent-Reach itself. Field names are short
 * words of the protocol; a value may be a payload or a result, so its bound is generous and only
 * stops what no reader should hold in memory.
 */
export const ENTRY_LIMITS = {
  /** Field-value pairs; the protocol's entries have at most 20. */
  maxFields: 64,
  /** Characters of a field name. */
  maxNameLength: 64,
  /** Characters of one value (16 Mi). */
  maxValueLength: 16 * 1024 * 1024,
} as const;

/** One parked entry as XRANGE shows it. */
export interface ParkedEntry {
  source: ParkedSource;
  /** The stream the entry was read from. */
  stream: string;
  /** The entry's id in that stream. */
  entry_id: string;
  /** Why it was set aside. */
  reason: string;
  /** The entry's field list as JSON text (cut at {@link PARKED_FIELDS_MAX_CHARS}), `null` when it had none. */
  fields: string;
  /** Who parked it: `registry-sync` or `agent:<agent_id>`. */
  by: string;
}

/**
 * What is wrong with an entry's shape before any field is read: none (trimmed away), an odd
 * field list, too many fields, a name given twice (which one would count?), a name or value too
 * long. Undefined when the shape is fine; the entry's own codec checks the rest.
 */
export function entryShapeProblem(fields: readonly unknown[] | null): string | undefined {
  if (fields === null) return 'entry has no fields (trimmed or deleted)';
  if (fields.length % 2 !== 0) return 'odd number of field names and values';
  if (fields.length / 2 > ENTRY_LIMITS.maxFields)
    return `more than ${ENTRY_LIMITS.maxFields} fields`;
  const names = new Set<string>();
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    const value = fields[i + 1];
    if (typeof name !== 'string' || typeof value !== 'string') return 'a field is not a string';
    if (name.length > ENTRY_LIMITS.maxNameLength)
      return `field name longer than ${ENTRY_LIMITS.maxNameLength} characters`;
    if (value.length > ENTRY_LIMITS.maxValueLength)
      return `field ${name.slice(0, 64)} longer than ${ENTRY_LIMITS.maxValueLength} characters`;
    if (names.has(name)) return `field ${name} given twice`;
    names.add(name);
  }
  return undefined;
}

/** The XADD field list of a parked entry. */
export function encodeParked(entry: ParkedEntry): string[] {
  return recordToFields({ ...entry });
}

/** The JSON text of an entry's fields, cut to {@link PARKED_FIELDS_MAX_CHARS}. */
export function parkedFieldsText(fields: readonly unknown[] | null): string {
  const text = JSON.stringify(fields);
  return text.length > PARKED_FIELDS_MAX_CHARS
    ? `${text.slice(0, PARKED_FIELDS_MAX_CHARS)}…(${text.length} characters)`
    : text;
}

/** Decodes a parked entry (for tools and tests); missing fields read as ''. */
export function decodeParked(fields: readonly string[]): ParkedEntry {
  const r = fieldsToRecord(fields);
  const source = r['source'];
  return {
    source: source === 'inbox' || source === 'pool' ? source : 'acks',
    stream: r['stream'] ?? '',
    entry_id: r['entry_id'] ?? '',
    reason: r['reason'] ?? '',
    fields: r['fields'] ?? '',
    by: r['by'] ?? '',
  };
}

/**
 * The key builder of the deployment an acks stream belongs to (`<prefix>:acks` or
 * `<prefix>:{acks:<i>}`, see {@link ReachKeys.acks}): an agent learns its prefix from its register
 * reply's `acks_stream` this way. Undefined for a name the key builder does not make.
 */
export function keysOfAcksStream(acksStream: string): ReachKeys | undefined {
  const m = /^(.+):(?:acks|\{acks:(\d+)\})$/.exec(acksStream);
  if (!m?.[1]) return undefined;
  try {
    const keys = reachKeys(m[1]);
    return keys.acks(Number(m[2] ?? 0)) === acksStream ? keys : undefined;
  } catch {
    return undefined;
  }
}
