/**
 * A first attempt sent as a router sends it — `TaskSender` over `Delivery`, its attempt taken by
 * `claimSubmission` (claim-n.lua, deliver-3.lua) — for tests of what registry-sync does after
 * the first send, with no hand-written task hash or inbox entry that could drift from the
 * scripts. The agent is the one candidate, as its record shows it.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  claimSubmission,
  defineDispatchCommands,
  Delivery,
  NO_CONSTRAINTS,
  SnapshotHolder,
  TaskSender,
  type Candidate,
  type SendOutcome,
  type TaskSpec,
} from '@agent-reach/dispatch';
import { createEventSink } from '@agent-reach/events';
import { toAgentView, type ReachKeys } from '@agent-reach/protocol';

/** The task a test sends: its id and capability, the rest a caller's defaults. */
export interface FirstSend {
  taskId: string;
  capability: string;
  payload?: string;
}

/** Sends attempt 1 of `task` to `agentId`; settles once its follow-up writes are done. */
export async function sendFirstAttempt(
  redis: Redis,
  keys: ReachKeys,
  logger: Logger,
  agentId: string,
  task: FirstSend,
): Promise<SendOutcome> {
  defineDispatchCommands(redis, ['claim', 'release-claim', 'deliver', 'record-pooled']);
  const delivery = new Delivery({ redis, keys, leaseBoundMs: 60_000 });
  const sender = new TaskSender({
    redis,
    keys,
    delivery,
    // Never started: the sender only keeps its live counts; the candidate comes from the record.
    snapshot: new SnapshotHolder({ redis, subscriber: redis, keys, intervalMs: 60_000, logger }),
    events: createEventSink({ logger }),
    logger,
    sessionTtlS: 60,
  });
  const spec: TaskSpec = {
    ...NO_CONSTRAINTS,
    taskId: task.taskId,
    capability: task.capability,
    payload: task.payload ?? '{}',
    callbackTopic: '',
    traceId: '',
  };
  const view = toAgentView(await redis.hgetall(keys.agent(agentId)), 0, Date.now());
  const agents: Candidate[] = view
    ? [
        {
          agent: {
            agent_id: view.agent_id,
            instance_id: view.instance_id,
            epoch: view.epoch,
            status: view.status,
            capabilities: view.capabilities,
            max_concurrency: view.max_concurrency,
            inflight: 0,
            region: view.region,
            channel: view.channel,
            lease_age_ms: view.lease_age_ms,
          },
          load: 0,
          score: 0,
        },
      ]
    : [];
  const claim = claimSubmission(redis, keys, delivery, {
    task: spec,
    nonce: `test:${task.taskId}`,
    timeoutMs: 0,
    watchdogAt: Date.now() + 60_000,
  });
  const outcome = await sender.send({
    task: spec,
    claim,
    to: { agents, count: agents.length },
    watched: true,
  });
  if (outcome.kind === 'sent') await outcome.recorded;
  return outcome;
}
