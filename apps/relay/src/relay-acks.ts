import {
  encodeAck,
  MAX_RENEW_TASK_IDS,
  RENEW_STAGE,
  withAckSignature,
  WORKER_GROUP,
  type AckMessage,
  type RegisterReply,
} from '@agent-reach/protocol';
import type { RedisClient } from '@agent-reach/service-kit/redis';

/** The part of an ack that differs between stages. */
export type AckBody = Omit<AckMessage, 'agent_id' | 'instance_id' | 'epoch'>;

/**
 * Writes one served agent's acks to its acks stream, as the agent itself would (docs/PROTOCOL.md
 * §4): under its instance and epoch, signed with its ack key when it has one. The relay's command
 * connection is shared by every agent it serves, so the acks of one tick leave in one write.
 */
export class RelayAcks {
  constructor(
    private readonly redis: RedisClient,
    private readonly session: RegisterReply,
  ) {}

  /** XADDs one ack. */
  async write(body: AckBody): Promise<void> {
    const s = this.session;
    const fields = encodeAck({
      ...body,
      agent_id: s.agent_id,
      instance_id: s.instance_id,
      epoch: s.epoch,
    });
    await this.redis.xadd(
      s.acks_stream,
      '*',
      ...(s.ack_key ? withAckSignature(fields, s.ack_key) : fields),
    );
  }

  /** Renews the execution leases of `taskIds` (one ack per thousand). */
  async renew(taskIds: readonly string[]): Promise<void> {
    for (let i = 0; i < taskIds.length; i += MAX_RENEW_TASK_IDS) {
      const ids = taskIds.slice(i, i + MAX_RENEW_TASK_IDS);
      await this.write({
        task_id: ids[0] as string,
        stage: RENEW_STAGE,
        attempt: 0,
        task_ids: ids,
      });
    }
  }

  /** XACKs an inbox entry once its task is reported. */
  async xack(messageId: string): Promise<void> {
    await this.redis.xack(this.session.stream, WORKER_GROUP, messageId);
  }
}
