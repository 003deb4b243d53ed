import { Type, type Static } from '@sinclair/typebox';

/** One tenant's figures in a capability's waiting room (docs/ROUTING.md, Waiting room). */
export const QueueTenantStats = Type.Object({
  tenant: Type.String(),
  queued: Type.Integer({ description: 'Tasks waiting now' }),
  oldest_wait_ms: Type.Integer({ description: 'How long its oldest waiting task has waited' }),
  arrived: Type.Integer({ description: 'Tasks that came into the room, ever' }),
  sent: Type.Integer({ description: 'Tasks sent from the room, ever' }),
  wait_p50_ms: Type.Integer({
    description: "Median wait of its tasks among the room's last 1,000 sent",
  }),
  wait_p99_ms: Type.Integer({ description: '99th percentile of the same' }),
  share: Type.Number({ description: "Its share of the room's last 1,000 sent tasks, 0–1" }),
});
export type QueueTenantStats = Static<typeof QueueTenantStats>;

/** A capability's waiting room. */
export const QueueStats = Type.Object({
  capability: Type.String(),
  queued: Type.Integer({ description: 'Tasks waiting now, all tenants' }),
  taking: Type.Integer({ description: 'Tasks taken from the room whose send has not ended' }),
  held: Type.Integer({
    description:
      'Tasks set aside for a second: no agent could take them when their turn came (their tags, region or tenant)',
  }),
  oldest_wait_ms: Type.Integer(),
  tenants: Type.Array(QueueTenantStats),
});
export type QueueStats = Static<typeof QueueStats>;

/** `GET /v1/queues` reply. */
export const QueuesReply = Type.Object({
  generated_at: Type.Integer({ description: 'Epoch milliseconds' }),
  queues: Type.Array(QueueStats),
});
export type QueuesReply = Static<typeof QueuesReply>;
