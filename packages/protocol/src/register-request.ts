import { Type, type Static } from '@sinclair/typebox';
import { RegisterBody } from './schemas.ts';

/**
 * `POST /v1/agents/register` body as sent: a {@link RegisterBody} that may carry an A2A
 * AgentCard, inline (`card`) or by URL (`card_url`, fetched by registry-sync from a loopback or
 * allowed host), and may then leave `capabilities` out: the card's skills supply them
 * (docs/PROTOCOL.md, Registering with an AgentCard).
 */
export const RegisterRequest = Type.Object(
  {
    ...RegisterBody.properties,
    capabilities: Type.Optional(RegisterBody.properties.capabilities),
    card: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "The agent's A2A AgentCard: each skill's id is a capability (docs/PROTOCOL.md)",
      }),
    ),
    card_url: Type.Optional(
      Type.String({
        pattern: '^https?://',
        maxLength: 2048,
        description:
          'Where registry-sync fetches the AgentCard: one of REACH_CARD_HOSTS, or a loopback host as REACH_OUTBOUND_LOOPBACK allows',
      }),
    ),
  },
  { additionalProperties: false },
);
/** A register request as sent; {@link RegisterBody} once its card is read. */
export type RegisterRequest = Static<typeof RegisterRequest>;
