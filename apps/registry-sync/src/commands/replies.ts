/**
 * Each script's reply decoded in one place: named fields, or a typed refusal from the one code
 * map (refusals.ts). The layouts are the ones each script's header documents; a reply of another
 * shape throws a {@link ScriptReplyError}.
 */
import { streamIdMs, type AgentPlacement, type AgentStatus } from '@agent-reach/protocol';
import { refusalOf, ScriptReplyError, type Refused, type Reply } from './refusals.ts';

function list(script: string, raw: unknown): unknown[] {
  if (!Array.isArray(raw)) throw new ScriptReplyError(script, raw, 'not an array');
  return raw as unknown[];
}

function asInt(script: string, raw: unknown, value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new ScriptReplyError(script, raw, `${what} is not an integer`);
  return value;
}

function int(script: string, raw: unknown, at: number): number {
  return asInt(script, raw, list(script, raw)[at], `slot ${at + 1}`);
}

function str(script: string, raw: unknown, at: number): string {
  const value = list(script, raw)[at];
  if (typeof value !== 'string')
    throw new ScriptReplyError(script, raw, `slot ${at + 1} is not a string`);
  return value;
}

/** An integer slot a script may leave empty (a field of a hash that lacks it): 0 then. */
function count(script: string, raw: unknown, at: number): number {
  const value = list(script, raw)[at];
  return value === null || value === undefined ? 0 : asInt(script, raw, value, `slot ${at + 1}`);
}

/** A string slot a script may leave empty: a hash field it read that does not exist is nil. */
function text(script: string, raw: unknown, at: number): string {
  const value = list(script, raw)[at];
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string')
    throw new ScriptReplyError(script, raw, `slot ${at + 1} is not a string`);
  return value;
}

function flag(script: string, raw: unknown): boolean {
  if (raw !== 0 && raw !== 1) throw new ScriptReplyError(script, raw, 'not 0 or 1');
  return raw === 1;
}

function jsonList(script: string, raw: unknown, at: number): string[] {
  let value: unknown;
  try {
    value = JSON.parse(str(script, raw, at));
  } catch {
    value = undefined;
  }
  // The agent record holds what register-3.lua wrote from a checked body: a bad one offers nothing.
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** register-3.lua. */
export type RegisterScriptReply =
  | {
      ok: true;
      epoch: number;
      nowMs: number;
      /** A new instance_id (or a new agent), not the same instance registering again. */
      newInstance: boolean;
      /** The instance's ack-signing key (kept when the same instance registers again). */
      ackKey: string;
      /** The instance this registration fenced off, or ''. */
      fenced: string;
    }
  | (Refused<'other_tenant'> & { owner: string });

/** Decodes register-3.lua's `{ epoch, now_ms, is_new_instance, ack key, fenced instance }` or its refusal. */
export function decodeRegisterReply(raw: unknown): RegisterScriptReply {
  const s = 'register-3.lua';
  if (int(s, raw, 0) < 0) {
    const refusal = refusalOf(s, int(s, raw, 0), ['other_tenant'], raw);
    return { ok: false, refusal, owner: text(s, raw, 1) };
  }
  return {
    ok: true,
    epoch: int(s, raw, 0),
    nowMs: int(s, raw, 1),
    newInstance: int(s, raw, 2) === 1,
    ackKey: text(s, raw, 3),
    fenced: text(s, raw, 4),
  };
}

/** The refusals of the token-checked agent scripts (heartbeat, deregister). */
export type AgentAuthRefusal =
  Refused<'unknown_agent' | 'wrong_token'> | (Refused<'stale_epoch'> & { currentEpoch: number });

function authRefusal(script: string, raw: unknown): AgentAuthRefusal {
  const refusal = refusalOf(
    script,
    int(script, raw, 0),
    ['unknown_agent', 'stale_epoch', 'wrong_token'],
    raw,
  );
  if (refusal === 'stale_epoch') return { ok: false, refusal, currentEpoch: int(script, raw, 1) };
  return { ok: false, refusal };
}

/** heartbeat-1.lua. */
export type HeartbeatReply =
  | {
      ok: true;
      epoch: number;
      status: AgentStatus;
      previous: AgentStatus;
      nowMs: number;
      instanceId: string;
    }
  | AgentAuthRefusal;

/** Decodes heartbeat-1.lua's `{ epoch, status, previous status, now_ms, instance_id }` or its refusal. */
export function decodeHeartbeatReply(raw: unknown): HeartbeatReply {
  const s = 'heartbeat-1.lua';
  if (int(s, raw, 0) < 0) return authRefusal(s, raw);
  return {
    ok: true,
    epoch: int(s, raw, 0),
    status: str(s, raw, 1) as AgentStatus,
    previous: text(s, raw, 2) as AgentStatus,
    nowMs: int(s, raw, 3),
    instanceId: text(s, raw, 4),
  };
}

/** deregister-2.lua. */
export type DeregisterReply =
  { ok: true; epoch: number; pending: number; instanceId: string } | AgentAuthRefusal;

/** Decodes deregister-2.lua's `{ epoch, pending count, instance_id }` or its refusal. */
export function decodeDeregisterReply(raw: unknown): DeregisterReply {
  const s = 'deregister-2.lua';
  if (int(s, raw, 0) < 0) return authRefusal(s, raw);
  return { ok: true, epoch: int(s, raw, 0), pending: int(s, raw, 1), instanceId: text(s, raw, 2) };
}

/** lease-4.lua. */
export interface LeaseReply {
  /** `NONE` when the agent has no record. */
  previous: AgentStatus | 'NONE';
  /** `GONE` when a drained agent was removed; `NONE` when it had no record. */
  status: AgentStatus | 'GONE' | 'NONE';
  leaseAgeMs: number;
  pending: number;
}

/** Decodes lease-4.lua's `{ previous status, new status, lease age ms, pending count }`. */
export function decodeLeaseReply(raw: unknown): LeaseReply {
  const s = 'lease-4.lua';
  return {
    previous: str(s, raw, 0) as LeaseReply['previous'],
    status: str(s, raw, 1) as LeaseReply['status'],
    leaseAgeMs: int(s, raw, 2),
    pending: int(s, raw, 3),
  };
}

/** One ack's agent step (ack-agent-3.lua). */
export type AckAgentReply = Reply<
  {
    /** When the attempt was delivered (its entry id's time); 0 when unknown. */
    sentAt: number;
    /** The pool entry to delete once the task step agrees; '' for none. */
    poolEntry: string;
    /** The agent's execution time was recorded in this step. */
    speedTracked: boolean;
    /** The pending entry was a liveness probe's (marked by deliver-3.lua). */
    probe: boolean;
    /** The delivery's entry id (the inbox's, or the pool's); '' when unknown. */
    entryId: string;
    /** The agent's region, tags and capabilities, when the ack may take a pooled task. */
    placement?: Required<AgentPlacement>;
  },
  'unknown_agent' | 'stale_epoch'
>;

/**
 * Decodes ack-agent-3.lua's reply to a batch: the agent's placement, then six slots per ack
 * (code, entry id, pool entry, speed tracked, probe, placement applies), one reply per ack.
 */
export function decodeAckAgentReplies(raw: unknown): AckAgentReply[] {
  const s = 'ack-agent-3.lua';
  const slots = list(s, raw);
  if (slots.length < 3 || (slots.length - 3) % 6 !== 0)
    throw new ScriptReplyError(s, raw, 'not a placement and six slots per ack');
  const placement = {
    region: text(s, raw, 0),
    tags: jsonList(s, raw, 1),
    capabilities: jsonList(s, raw, 2),
  };
  const out: AckAgentReply[] = [];
  for (let i = 3; i < slots.length; i += 6) {
    const code = int(s, raw, i);
    if (code < 0) {
      out.push({ ok: false, refusal: refusalOf(s, code, ['unknown_agent', 'stale_epoch'], raw) });
      continue;
    }
    const entryId = text(s, raw, i + 1);
    out.push({
      ok: true,
      sentAt: entryId ? streamIdMs(entryId) : 0,
      poolEntry: text(s, raw, i + 2),
      speedTracked: int(s, raw, i + 3) === 1,
      probe: int(s, raw, i + 4) === 1,
      entryId,
      ...(int(s, raw, i + 5) === 1 ? { placement } : {}),
    });
  }
  return out;
}

/** The task step of an ack (ack-task-2.lua). */
export type AckTaskReply = Reply<
  {
    capability: string;
    /** '' when the task has none. */
    callbackTopic: string;
    traceId: string;
    /** When the receipt was recorded; 0 before it. */
    receivedAt: number;
    /** The `sent` record's time; 0 when it has not landed yet. */
    sentAt: number;
    /** The task's current attempt. */
    attempt: number;
    /** The task is completed now (its result may be published). */
    final: boolean;
    /** A receipt the worker folded into this completion or failure was recorded here. */
    foldedRecorded: boolean;
  },
  'unknown_task' | 'not_assigned' | 'duplicate' | 'not_eligible'
>;

/** Decodes ack-task-2.lua's 9-slot reply or its refusal. */
export function decodeAckTaskReply(raw: unknown): AckTaskReply {
  const s = 'ack-task-2.lua';
  const code = int(s, raw, 0);
  if (code < 0) {
    const allowed = ['unknown_task', 'not_assigned', 'duplicate', 'not_eligible'] as const;
    return { ok: false, refusal: refusalOf(s, code, allowed, raw) };
  }
  return {
    ok: true,
    capability: text(s, raw, 1),
    callbackTopic: text(s, raw, 2),
    traceId: text(s, raw, 3),
    receivedAt: count(s, raw, 4),
    sentAt: count(s, raw, 5),
    attempt: count(s, raw, 6),
    final: count(s, raw, 7) === 1,
    foldedRecorded: count(s, raw, 8) === 1,
  };
}

/** release-3.lua. */
export interface ReleaseReply {
  /** The attempt held a slot, now free. */
  released: boolean;
  /** A pull agent's pool task: the pool and entry the caller still has to settle. */
  pool?: { capability: string; entryId: string };
}

/** Decodes release-3.lua's `{ released, pool capability or "", pool entry id or "" }`. */
export function decodeReleaseReply(raw: unknown): ReleaseReply {
  const s = 'release-3.lua';
  const capability = str(s, raw, 1);
  const entryId = str(s, raw, 2);
  return {
    released: int(s, raw, 0) === 1,
    ...(capability && entryId ? { pool: { capability, entryId } } : {}),
  };
}

/** Decodes snapshot-2.lua's `{ version, written_at_ms }`. */
export function decodeSnapshotReply(raw: unknown): { version: number; writtenAt: number } {
  const s = 'snapshot-2.lua';
  return { version: int(s, raw, 0), writtenAt: int(s, raw, 1) };
}

/** Decodes slow-1.lua's reply: the agent's slow streak after this completion (0 when gone). */
export function decodeSlowReply(raw: unknown): number {
  return asInt('slow-1.lua', raw, raw, 'the reply');
}

/** Decodes lock-1.lua's reply: whether the caller holds the lock. */
export function decodeLockReply(raw: unknown): boolean {
  return flag('lock-1.lua', raw);
}

/** Decodes suspect-1.lua's reply: whether the agent became SUSPECT now. */
export function decodeSuspectReply(raw: unknown): boolean {
  return flag('suspect-1.lua', raw);
}

/** Decodes renew-3.lua's reply: how many leases it renewed, or its refusal. */
export function decodeRenewReply(
  raw: unknown,
): { ok: true; renewed: number } | Refused<'unknown_agent' | 'stale_epoch'> {
  const s = 'renew-3.lua';
  const n = asInt(s, raw, raw, 'the reply');
  if (n >= 0) return { ok: true, renewed: n };
  return { ok: false, refusal: refusalOf(s, n, ['unknown_agent', 'stale_epoch'], raw) };
}

/** Decodes eject-1.lua's reply: whether the agent was ejected (false: it is gone). */
export function decodeEjectReply(raw: unknown): boolean {
  return flag('eject-1.lua', raw);
}

/** Decodes serve-1.lua's `{ epoch }` or its refusal (the agent's token is checked). */
export function decodeServeReply(raw: unknown): { ok: true; epoch: number } | AgentAuthRefusal {
  const s = 'serve-1.lua';
  if (int(s, raw, 0) < 0) return authRefusal(s, raw);
  return { ok: true, epoch: int(s, raw, 0) };
}

/** Decodes delconsumer-1.lua's reply: whether the consumer was deleted (false: it still holds entries). */
export function decodeDelConsumerReply(raw: unknown): boolean {
  return flag('delconsumer-1.lua', raw);
}

/** Decodes requeue-1.lua's reply: the new pool entry's id, or undefined when the entry was gone. */
export function decodeRequeueReply(raw: unknown): string | undefined {
  if (typeof raw !== 'string') throw new ScriptReplyError('requeue-1.lua', raw, 'not a string');
  return raw === '' ? undefined : raw;
}
