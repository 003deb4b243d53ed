/**
 * The cluster leg of `npm test`: the end-to-end files that run a second time with
 * `REACH_TEST_REDIS=cluster`, against one 3-master Redis Cluster shared by the leg (the chaos test
 * starts a cluster of its own, since it kills a master). The one list; vitest.config.ts reads it.
 */
export const CLUSTER_LEG: readonly string[] = [
  // submit → complete, with its callback, by a worker speaking only Redis
  'e2e/raw-redis-worker.test.ts',
  // submit → complete through the SDK: batches, waits, results on the caller's topic
  'e2e/batch-and-wait.test.ts',
  // reclaim from a dead agent, draining, stale instances, loops
  'e2e/reclaim.test.ts',
  // retries → DLQ → replay
  'e2e/retries-and-dlq.test.ts',
  'e2e/pull-pools.test.ts',
  'e2e/idempotency.test.ts',
  // cancel: final at once, one callback item, the running handler aborted, the children with it
  'e2e/cancel.test.ts',
  // progress and streamed output: the task's events stream, SSE with Last-Event-ID
  'e2e/task-events.test.ts',
  'e2e/chaos.test.ts',
  // MOVED and ASK: a slot holding live inboxes moves to another master while tasks flow
  'e2e/reshard.test.ts',
  // endpoint agents: the relay woken by SPUBLISH on each master, replica and relay kills
  'e2e/relay-http.test.ts',
  // a Python pull agent through its own Cluster client (CLUSTER SLOTS, MOVED and ASK)
  'e2e/python-pull.test.ts',
  // the waiting room: fair shares, bounds and deadlines with the room's keys on one slot
  'e2e/waiting-room.test.ts',
  'e2e/room-pools.test.ts',
  // shadow copies kept under the observing agent's tag; a dependency flagged from many agents' slots
  'e2e/shadow-traffic.test.ts',
  'e2e/shared-dependency.test.ts',
  // task search: every task shard's index merged, and the InfluxDB archive past Redis retention
  'e2e/task-search.test.ts',
  // webhook deliveries: the due set, deliveries, targets and failures on the {wh} slot
  'e2e/webhooks.test.ts',
  // archived task history: the archive outboxes and tombstones under each task shard's tag
  'e2e/task-history.test.ts',
];

/** Files of {@link CLUSTER_LEG} that need a cluster: the standalone leg leaves them out. */
export const CLUSTER_ONLY: readonly string[] = ['e2e/reshard.test.ts'];
