import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';

/** What each finished outbox entry passes, in the order archive-done-n.lua reads it. */
const ENTRY_FIELDS = ['entryId', 'taskId', 'endMs', 'tombTtlS'] as const;

/**
 * Finishes a task shard's archive outbox entries once their records are in InfluxDB: each task
 * still final gets its expiry and tombstone, and the entries are deleted (archive-done-n.lua).
 * `moreKeys`: per entry its task hash, timeline and end day's tombstones hash.
 */
export const archiveDoneScript = defineScript({
  lua: new URL('./archive-done-n.lua', import.meta.url),
  command: 'reachArchiveDone',
  keys: ['outbox'],
  moreKeys: 'entries',
  args: ['taskRetentionS', 'dlqRetentionS'],
  each: { name: 'entries', fields: ENTRY_FIELDS },
  decode: (raw) => {
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0)
      throw new ScriptReplyError('archive-done-n.lua', raw, 'not a count');
    return raw;
  },
});
