import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BatchHeartbeatBody, BatchHeartbeatReply, ErrorReply } from '@agent-reach/protocol';
import type { FleetEventLog } from '@agent-reach/dispatch';
import type { HeartbeatBatch } from '../../registry/heartbeat-batch.ts';

/** Largest body of a batch of heartbeats, bytes: a full batch of the largest beats. */
export const HEARTBEATS_BODY_LIMIT = 1_048_576;

/** What the batch heartbeat route needs. */
export interface HeartbeatsRouteDeps {
  batch: HeartbeatBatch;
  /** Publishes agents whose status changed, so routers learn of it at once (a delta). */
  onRegistryChange: (agentIds: readonly string[]) => Promise<void>;
  /** Where status changes are announced. */
  fleet: FleetEventLog;
}

/**
 * `POST /v1/agents/heartbeats`: many agents' heartbeats in one request (a relay's, for the
 * endpoint agents it serves). No API key: each beat carries its agent's own token, checked as
 * the single heartbeat's bearer is (`agent-token`). One answer per beat, in order; a refused
 * beat carries its code. Status changes are announced as the single route announces them, with
 * one delta for the batch.
 */
export const heartbeatsRoutes: FastifyPluginAsyncTypebox<HeartbeatsRouteDeps> = async (
  app,
  { batch, onRegistryChange, fleet },
) => {
  app.post(
    '/v1/agents/heartbeats',
    {
      // A relay beats for all its agents every few seconds: only problems are worth a log line.
      logLevel: 'warn',
      // Up to 1000 beats of up to ~700 bytes each, past REACH_REGISTRY_BODY_LIMIT's default.
      bodyLimit: HEARTBEATS_BODY_LIMIT,
      config: { auth: 'agent-token' },
      schema: {
        body: BatchHeartbeatBody,
        response: { 200: BatchHeartbeatReply, 400: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      const { acks, changes } = await batch.beat(request.body.beats);
      for (const change of changes) {
        request.log.info(change, 'agent status changed');
        fleet.append({ kind: 'status', ...change, reason: 'heartbeat' });
      }
      if (changes.length > 0) await onRegistryChange(changes.map((c) => c.agent_id));
      return { acks };
    },
  );
};
