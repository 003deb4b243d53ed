import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';
import { int, oneOf, slots, text } from '../reply-slots.ts';
import { slotsScript } from '../snapshot/slots.ts';

/** What putting a task in a room did (room-enqueue-1.lua). */
export type EnqueueReply =
  | { kind: 'queued'; ahead: number }
  | { kind: 'present' }
  | { kind: 'tenant_full'; waiting: number }
  | { kind: 'room_full'; waiting: number };

/** One task entering a room: what room-enqueue-1.lua reads of it. */
export const ENQUEUE_FIELDS = [
  'taskId',
  'tenant',
  'fairnessKey',
  'tenantWeight',
  'keyWeight',
  'priority',
  'now',
  'maxTenant',
  'maxTotal',
  'maxInflight',
] as const;

/**
 * Puts tasks in their capability's waiting room, in fair order, each as if it came alone
 * (room-enqueue-1.lua): one reply per task.
 */
export const roomEnqueueScript = defineScript({
  lua: new URL('./room-enqueue-1.lua', import.meta.url),
  command: 'reachRoomEnqueue',
  keys: ['room'],
  args: [],
  each: { name: 'tasks', fields: ENQUEUE_FIELDS },
  decode: (raw, _args, items = []): EnqueueReply[] => {
    const s = 'room-enqueue-1.lua';
    const list = slots(s, raw);
    if (list.length !== items.length * 2)
      throw new ScriptReplyError(s, raw, `${list.length} slots for ${items.length} tasks`);
    const out: EnqueueReply[] = [];
    for (let i = 0; i < list.length; i += 2) {
      const code = int(s, raw, list, i);
      const n = int(s, raw, list, i + 1);
      if (code === 0) out.push({ kind: 'queued', ahead: n });
      else if (code === 1) out.push({ kind: 'present' });
      else if (code === -1) out.push({ kind: 'tenant_full', waiting: n });
      else if (code === -2) out.push({ kind: 'room_full', waiting: n });
      else throw new ScriptReplyError(s, raw, `unknown state ${code}`);
    }
    return out;
  },
});

/** One task taken from a room. */
export interface TakenFromRoom {
  taskId: string;
  tenant: string;
  /** How long it waited so far, ms. */
  waitedMs: number;
  /** How many tasks waited in the room when it came. */
  ahead: number;
}

/** Takes tasks from a room in fair order (room-pop-1.lua). */
export const roomPopScript = defineScript({
  lua: new URL('./room-pop-1.lua', import.meta.url),
  command: 'reachRoomPop',
  keys: ['room'],
  args: ['now', 'most', 'skip'],
  decode: (raw): TakenFromRoom[] => {
    const s = 'room-pop-1.lua';
    const list = slots(s, raw);
    if (list.length % 4 !== 0) throw new ScriptReplyError(s, raw, `${list.length} slots`);
    const out: TakenFromRoom[] = [];
    for (let i = 0; i < list.length; i += 4) {
      out.push({
        taskId: text(s, raw, list, i),
        tenant: text(s, raw, list, i + 1),
        waitedMs: int(s, raw, list, i + 2),
        ahead: int(s, raw, list, i + 3),
      });
    }
    return out;
  },
});

/** Gives a taken or held task back to its place (room-return-1.lua): true when it was there. */
export const roomReturnScript = defineScript({
  lua: new URL('./room-return-1.lua', import.meta.url),
  command: 'reachRoomReturn',
  keys: ['room'],
  args: ['taskId', 'from'],
  decode: (raw): boolean => oneOf('room-return-1.lua', raw, [0, 1]) === 1,
});

/** Sets a taken task aside until a time (room-hold-1.lua): true when it was being taken. */
export const roomHoldScript = defineScript({
  lua: new URL('./room-hold-1.lua', import.meta.url),
  command: 'reachRoomHold',
  keys: ['room'],
  args: ['taskId', 'until'],
  decode: (raw): boolean => oneOf('room-hold-1.lua', raw, [0, 1]) === 1,
});

/** Ends a sent task's stay (room-done-1.lua): its wait in ms, or -1 when it was not being taken. */
export const roomDoneScript = defineScript({
  lua: new URL('./room-done-1.lua', import.meta.url),
  command: 'reachRoomDone',
  keys: ['room'],
  args: [],
  each: { name: 'tasks', fields: ['taskId', 'now'] },
  decode: (raw, _args, items = []): number[] => {
    const s = 'room-done-1.lua';
    const list = slots(s, raw);
    if (list.length !== items.length)
      throw new ScriptReplyError(s, raw, `${list.length} replies for ${items.length} tasks`);
    return list.map((_, i) => int(s, raw, list, i));
  },
});

/** Where a task left a room from (room-leave-1.lua): waiting, or taken (or held). */
export type LeaveReply = 'waiting' | 'taking' | 'absent';

const LEAVE = { 0: 'absent', 1: 'waiting', 2: 'taking' } as const;

/** Takes a task out of a room wherever it is in it (room-leave-1.lua). */
export const roomLeaveScript = defineScript({
  lua: new URL('./room-leave-1.lua', import.meta.url),
  command: 'reachRoomLeave',
  keys: ['room'],
  args: ['taskId'],
  decode: (raw): LeaveReply => LEAVE[oneOf('room-leave-1.lua', raw, [0, 1, 2])],
});

/** How deep a pool is: entries handed out and not acknowledged, plus those waiting (pool-depth-3.lua). */
export const poolDepthScript = defineScript({
  lua: new URL('./pool-depth-3.lua', import.meta.url),
  command: 'reachPoolDepth',
  keys: ['high', 'mid', 'low'],
  args: ['group', 'most'],
  decode: (raw): number => {
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0)
      throw new ScriptReplyError('pool-depth-3.lua', raw, 'not a count');
    return raw;
  },
});

/** Every script of the waiting room, and the slot count its capacity waiter reads. */
export const ROOM_SCRIPTS = [
  slotsScript,
  roomEnqueueScript,
  roomPopScript,
  roomReturnScript,
  roomHoldScript,
  roomDoneScript,
  roomLeaveScript,
  poolDepthScript,
] as const;
