export { hash32 } from './routing/hash.ts';
export { mulberry32 } from './routing/prng.ts';
export { HashRing, VIRTUAL_NODES } from './routing/hash-ring.ts';
export { rankCandidates, type RankedAgent, type LiveInflight } from './routing/select.ts';
export { SnapshotHolder, type SnapshotHolderOptions } from './snapshot/snapshot-holder.ts';
export { CapacityWaiter, type CapacityWaiterOptions } from './snapshot/capacity-waiter.ts';
export { slotsScript } from './snapshot/slots.ts';
export { DISPATCH_SCRIPTS, defineDispatchCommands, type DispatchScriptName } from './scripts.ts';
export { assignScript, type AssignReply } from './commands/assign.ts';
export { claimScript, type ClaimReply } from './commands/claim.ts';
export { deliverScript, type DeliverReply, type DeliveryRefusal } from './commands/deliver.ts';
export { holdScript, type HoldReply } from './commands/hold.ts';
export { markSeenScript } from './commands/mark-seen.ts';
export { publishCallbackScript } from './commands/publish-callback.ts';
export { recordPooledScript } from './commands/record-pooled.ts';
export { releaseClaimScript, type ReleaseClaimReply } from './commands/release-claim.ts';
export { scheduleAdvanceScript } from './commands/schedule-advance.ts';
export { scheduleStateScript } from './commands/schedule-state.ts';
export { unassignScript } from './commands/unassign.ts';
export { cancelScript, type CancelledTask, type CancelReply } from './task/cancel.ts';
export { rejectScript } from './task/reject.ts';
export { replayScript, type ReplayReply } from './task/replay.ts';
export { retryScript, type RetryReply } from './task/retry.ts';
export { LeaseLock, lockScript, type LeaseLockOptions } from './lease/lease-lock.ts';
export {
  Delivery,
  type DeliveryOptions,
  type DeliveryResult,
  type DeliveryTarget,
  type PooledRecord,
} from './delivery.ts';
export {
  packRoute,
  taskTimeline,
  unpackRoute,
  type RoutingRecord,
  type TaskTimeline,
} from './task/timeline.ts';
export { taskViewOf, type TaskViewOptions } from './task/task-view.ts';
export { formatPendingEntry, parsePendingEntry, type PendingEntry } from './task/pending-entry.ts';
export { DueWatch, type DueWatchOptions } from './due-watch.ts';
export {
  CallbackPublisher,
  type CallbackPublisherOptions,
  type CallbackSettings,
} from './callbacks.ts';
export {
  decide,
  DEFAULT_POLICY,
  isPull,
  isPush,
  servesTenant,
  type Candidate,
  type Decision,
  type Exclusion,
  type PolicySettings,
  type RouteRequest,
} from './routing/policy.ts';
export { FleetEventLog, type FleetEventLogOptions } from './fleet-event-log.ts';
export {
  attemptMessage,
  NO_CONSTRAINTS,
  poolOf,
  readStoredTask,
  type RegionPolicy,
  type StoredTask,
  type TaskConstraints,
  type TaskSpec,
} from './task/task-spec.ts';
export { traceOf, type Lineage } from './task/lineage.ts';
export { poolStreamOf } from './task/pool-stream.ts';
export { TaskCanceller, type CancelOutcome, type TaskCancellerOptions } from './task/canceller.ts';
export { writeFollowUp, type FollowUpEntry } from './task/follow-up.ts';
export {
  hasLive,
  onlyExcludedFor,
  policyWith,
  routeRequestFor,
  routeTask,
  routeWithFallback,
  type RouteOptions,
  type Routed,
  type RoutedTo,
  type RoutingContext,
} from './send/route-task.ts';
export {
  assignRetry,
  claimSubmission,
  type AttemptClaim,
  type RetryAssignment,
  type SubmissionClaim,
  type Taken,
} from './send/attempt-claims.ts';
export {
  TaskSender,
  type PoolReason,
  type SendOutcome,
  type SendRequest,
  type SendTarget,
  type TaskSenderOptions,
} from './send/task-sender.ts';
export { DeadLetterer, type DeadLettererOptions, type DeadTask } from './task/dead-letterer.ts';
export {
  createSendPath,
  type SendPath,
  type SendPathOptions,
  type SendPathSettings,
} from './send/send-path.ts';
export { noticeStage, type StageNotice } from './send/stage-notice.ts';
export { holdTask, type HoldOutcome, type HoldPath, type HoldRequest } from './send/hold.ts';
export { HoldBatch } from './send/hold-batch.ts';
export { cadenceProblem, latestTick, nextTick, type Cadence } from './schedule/ticks.ts';
export {
  firedTaskId,
  scheduleTenant,
  ScheduleStore,
  type ScheduleStoreOptions,
  type ScheduleRecord,
} from './schedule/schedule-store.ts';
export {
  WaitingRoom,
  type RoomEntry,
  type RoomStats,
  type RoomTenantStats,
} from './room/waiting-room.ts';
export { RoomDrainer, type RoomDrainerOptions } from './room/room-drainer.ts';
export { ShadowMirror, type ShadowMirrorOptions } from './shadow/shadow-mirror.ts';
export {
  ShadowSettingsStore,
  SHADOW_SETTINGS_REFRESH_MS,
  type ShadowSettingsOptions,
} from './shadow/shadow-settings.ts';
export { PoolGauge, poolBound, pullSlots } from './room/pool-gauge.ts';
export {
  ROOM_SCRIPTS,
  type EnqueueReply,
  type LeaveReply,
  type TakenFromRoom,
} from './room/room-scripts.ts';
export { queueTask, type QueueRequest, type QueueOutcome } from './room/queue-task.ts';
