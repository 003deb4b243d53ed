export { hash32 } from './routing/hash.ts';
export { mulberry32 } from './routing/prng.ts';
export { HashRing, VIRTUAL_NODES } from './routing/hash-ring.ts';
export { rankCandidates, type RankedAgent, type LiveInflight } from './routing/select.ts';
export { SnapshotHolder } from './snapshot/snapshot-holder.ts';
export { CapacityWaiter } from './snapshot/capacity-waiter.ts';
export { defineCommands as defineDispatchCommands } from './commands/index.ts';
export {
  Delivery,
  type DeliveryResult,
  type DeliveryRefusal,
  type DeliveryTarget,
  type RoutingRecord,
} from './delivery.ts';
export { DueWatch } from './due-watch.ts';
export { CallbackPublisher, type CallbackSettings } from './callbacks.ts';
export {
  decide,
  DEFAULT_POLICY,
  isPull,
  isPush,
  type Candidate,
  type Decision,
  type Exclusion,
  type PolicySettings,
  type RouteRequest,
} from './routing/policy.ts';
