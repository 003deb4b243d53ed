/**
 * Hostile entries for the streams processes read besides inboxes, pools and acks (those are in
 * test/e2e/malformed-entries.test.ts): an agent's control stream, the router's result-wait topic
 * and its A2A push topic, a caller's callback topic, a task's events stream and the fleet events
 * stream; beside them, members of the due set and messages on the pub/sub channels. Each entry
 * starts from a valid one (the protocol's own field names) and is broken in one way: a value
 * hostile, a field missing, doubled or unknown, too many fields, a field name too long.
 */
import fc from 'fast-check';
import {
  CallbackField,
  ControlField,
  FLEET_EVENT_FIELD,
  TaskEventField,
  type ReachKeys,
} from '@agent-reach/protocol';

/** The streams fuzzed here, by the process that reads them. */
export type EntrySource =
  /** An agent's control stream (the worker-sdk, with XREAD). */
  | 'control'
  /** The router's result-wait topic (`_wait.<router>`, XREAD): `?wait_ms` and blocking sends. */
  | 'wait-topic'
  /** The routers' A2A push topic (`_wait.a2a-push`, XREADGROUP). */
  | 'push-topic'
  /** A caller's topic, read by `GET /v1/callbacks/:topic`. */
  | 'callback-topic'
  /** A task's events (`GET /v1/tasks/:id/events`, A2A streams). */
  | 'task-events'
  /** The fleet events (`GET /v1/console/events`). */
  | 'fleet-events';

/** One entry to XADD, and where. */
export interface HostileEntry {
  source: EntrySource;
  fields: string[];
}

/** Where each source's entries go and which ids they name. */
export interface EntryTargets {
  keys: ReachKeys;
  /** The agent whose control stream is fuzzed. */
  agentId: string;
  /** The router's own wait topic (found in Redis once a wait has been served). */
  waitTopic: string;
  pushTopic: string;
  callbackTopic: string;
  /** Tasks that exist (finished), whose events stream gets entries and which entries name. */
  taskIds: readonly string[];
}

/** The stream key of a source. */
export function streamOf(source: EntrySource, t: EntryTargets): string {
  switch (source) {
    case 'control':
      return t.keys.control(t.agentId);
    case 'wait-topic':
      return t.keys.callback(t.waitTopic);
    case 'push-topic':
      return t.keys.callback(t.pushTopic);
    case 'callback-topic':
      return t.keys.callback(t.callbackTopic);
    case 'task-events':
      return t.keys.taskEvents(t.taskIds[0] as string);
    case 'fleet-events':
      return t.keys.fleetEvents();
  }
}

/** Values no field should hold. */
const junk: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'a{b}',
    '{t:x}',
    '{"a":',
    '[',
    '-1',
    '0',
    'NaN',
    'Infinity',
    '1e400',
    '99999999999999999999999',
    '\u0000',
    '\ud800',
    '💩',
    'null',
    '{}',
    '[]',
    '__proto__',
    'constructor',
    '../x',
    'x'.repeat(70_000),
    '['.repeat(5000),
    '{"kind":"cancel"}',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** A valid entry of each source, its values drawn from the ids given. */
function template(
  source: EntrySource,
  ids: fc.Arbitrary<string>,
): fc.Arbitrary<Record<string, string>> {
  const now = String(Date.now());
  switch (source) {
    case 'control':
      return ids.map((id) => ({
        [ControlField.kind]: 'cancel',
        [ControlField.taskId]: id,
        [ControlField.attempt]: '1',
      }));
    case 'wait-topic':
    case 'push-topic':
    case 'callback-topic':
      return fc
        .tuple(
          ids,
          fc.constantFrom('completed', 'dead', 'cancelled', 'failed', 'progress', 'chunk'),
        )
        .map(([id, status]) => ({
          [CallbackField.taskId]: id,
          [CallbackField.status]: status,
          [CallbackField.capability]: 'ent-echo',
          [CallbackField.agentId]: 'ent-echo',
          [CallbackField.attempt]: '1',
          [CallbackField.result]: '{"forged":true}',
          [CallbackField.durationMs]: '1',
          [CallbackField.completedAt]: now,
        }));
    case 'task-events':
      return fc.constantFrom('chunk', 'progress', 'truncated').map((kind) => ({
        [TaskEventField.kind]: kind,
        [TaskEventField.at]: now,
        [TaskEventField.attempt]: '1',
        [TaskEventField.data]:
          kind === 'chunk' ? 'forged' : kind === 'progress' ? '{"p":1}' : '{"chunks":1,"bytes":1}',
      }));
    case 'fleet-events':
      return fc
        .record({
          kind: fc.constantFrom('registered', 'status', 'retry', 'dead', 'nope'),
          agent_id: fc.oneof(fc.constant('ent-echo'), junk),
          task_id: fc.oneof(ids, fc.jsonValue({ maxDepth: 2 })),
          from: fc.oneof(fc.constant('HEALTHY'), fc.jsonValue({ maxDepth: 1 })),
          attempt: fc.oneof(fc.nat(), fc.jsonValue({ maxDepth: 1 })),
        })
        .map((e) => ({ [FLEET_EVENT_FIELD]: JSON.stringify({ ...e, at: Date.now() }) }));
  }
}

const flat = (r: Record<string, string>): string[] => Object.entries(r).flat();

/** A valid entry of `source` broken in one way (or left valid, now and then). */
function brokenArb(source: EntrySource, ids: fc.Arbitrary<string>): fc.Arbitrary<string[]> {
  const valid = template(source, ids);
  const name = fc.stringMatching(/^[a-z_]{1,12}$/);
  return fc
    .oneof(
      { weight: 1, arbitrary: valid.map(flat) },
      {
        weight: 4,
        arbitrary: fc.tuple(valid, fc.nat(), junk).map(([r, i, v]) => {
          const keys = Object.keys(r);
          return flat({ ...r, [keys[i % keys.length] as string]: v });
        }),
      },
      {
        weight: 2,
        arbitrary: fc.tuple(valid, fc.nat()).map(([r, i]) => {
          const keys = Object.keys(r);
          const copy = { ...r };
          delete copy[keys[i % keys.length] as string];
          return flat(copy);
        }),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(valid, fc.nat(), junk).map(([r, i, v]) => {
          const keys = Object.keys(r);
          return [...flat(r), keys[i % keys.length] as string, v];
        }),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(valid, fc.integer({ min: 40, max: 300 }))
          .map(([r, n]) => [
            ...flat(r),
            ...Array.from({ length: n }, (_, i) => [`x${i}`, 'v']).flat(),
          ]),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(valid, fc.integer({ min: 200, max: 2000 }))
          .map(([r, n]) => [...flat(r), 'n'.repeat(n), 'v']),
      },
      {
        weight: 1,
        arbitrary: fc
          .array(fc.tuple(name, junk), { minLength: 1, maxLength: 6 })
          .map((pairs) => pairs.flat()),
      },
    )
    .filter((f) => f.length > 0);
}

/** Hostile entries of every source. */
export function entryArb(t: EntryTargets): fc.Arbitrary<HostileEntry> {
  const ids = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...t.taskIds) },
    { weight: 2, arbitrary: junk },
    { weight: 1, arbitrary: fc.nat().map((n) => `ent-unknown-${n}`) },
  );
  const sources: EntrySource[] = [
    'control',
    'wait-topic',
    'push-topic',
    'callback-topic',
    'task-events',
    'fleet-events',
  ];
  return fc.oneof(
    ...sources.map((source) =>
      brokenArb(source, ids).map((fields): HostileEntry => ({ source, fields })),
    ),
  );
}

/** Members for the due set (registry-sync's sweeper reads them): ids, watchdogs, follow-ups, junk. */
export const dueMemberArb: fc.Arbitrary<string> = fc.oneof(
  junk,
  junk.map((j) => `#${j}`),
  junk.map((j) => `!${j}`),
  fc.constantFrom('#', '!', '##', '!!', '#!x', 'ent-unknown-1', '#ent-unknown-2', '!ent-unknown-3'),
);

/** Messages for the pub/sub channels (snapshot and API keys announcements). */
export const channelMessageArb: fc.Arbitrary<string> = fc.oneof(junk, fc.nat().map(String));
