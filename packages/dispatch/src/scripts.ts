import type { RedisClient } from '@agent-reach/service-kit/redis';
import { loadScripts, type AnyScript } from '@agent-reach/service-kit';
import { assignScript } from './commands/assign.ts';
import { claimScript } from './commands/claim.ts';
import { deliverScript } from './commands/deliver.ts';
import { holdScript } from './commands/hold.ts';
import { markSeenScript } from './commands/mark-seen.ts';
import { publishCallbackScript } from './commands/publish-callback.ts';
import { recordPooledScript } from './commands/record-pooled.ts';
import { releaseClaimScript } from './commands/release-claim.ts';
import { scheduleAdvanceScript } from './commands/schedule-advance.ts';
import { scheduleStateScript } from './commands/schedule-state.ts';
import { unassignScript } from './commands/unassign.ts';
import { cancelScript } from './task/cancel.ts';
import { rejectScript } from './task/reject.ts';
import { replayScript } from './task/replay.ts';
import { retryScript } from './task/retry.ts';
import { lockScript } from './lease/lease-lock.ts';

/**
 * Every script of this package by its name (its file's `<name>`): the send path's in
 * `commands/`, the task state machine's (cancel, reject, replay, retry) in `task/`, the lease
 * lock of a duty one instance runs at a time in `lease/`. A connection gets only the ones it
 * runs (`loadScripts`).
 */
export const DISPATCH_SCRIPTS = {
  assign: assignScript,
  claim: claimScript,
  deliver: deliverScript,
  hold: holdScript,
  'mark-seen': markSeenScript,
  'publish-callback': publishCallbackScript,
  'record-pooled': recordPooledScript,
  'release-claim': releaseClaimScript,
  'schedule-advance': scheduleAdvanceScript,
  'schedule-state': scheduleStateScript,
  unassign: unassignScript,
  cancel: cancelScript,
  reject: rejectScript,
  replay: replayScript,
  retry: retryScript,
  lock: lockScript,
} as const satisfies Readonly<Record<string, AnyScript>>;

/** The name of a script of this package. */
export type DispatchScriptName = keyof typeof DISPATCH_SCRIPTS;

/**
 * Defines this package's scripts on the connection: those named or given in `only`, or every one
 * (tests). A service lists the definitions it runs and passes them to `loadScripts` itself; this
 * is for callers that name them.
 */
export function defineDispatchCommands(
  redis: RedisClient,
  only?: readonly (DispatchScriptName | AnyScript)[],
): void {
  const all: readonly AnyScript[] = Object.values(DISPATCH_SCRIPTS);
  loadScripts(
    redis,
    only ? only.map((s) => (typeof s === 'string' ? DISPATCH_SCRIPTS[s] : s)) : all,
  );
}
