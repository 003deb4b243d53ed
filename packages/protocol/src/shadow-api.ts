import { Type, type Static } from '@sinclair/typebox';
import { ID_PATTERN } from './ids.ts';
import { COMPARE_PATH, MAX_COMPARE_PATHS } from './shadow.ts';

/**
 * The HTTP shapes of shadow traffic (docs/PROTOCOL.md §7): a capability's shadow settings on the
 * router (`/v1/capabilities/:capability/shadow`, operators) and an observing agent's report on
 * registry-sync (`GET /v1/agents/:agent_id/observation`).
 */

/** `/v1/capabilities/:capability/…` params. */
export const CapabilityParams = Type.Object({
  capability: Type.String({ pattern: ID_PATTERN, description: 'Capability' }),
});
export type CapabilityParams = Static<typeof CapabilityParams>;

const Paths = (description: string) =>
  Type.Array(Type.String({ pattern: COMPARE_PATH.source }), {
    maxItems: MAX_COMPARE_PATHS,
    description,
  });

const Compare = Type.Object(
  {
    paths: Type.Optional(
      Paths('Compare only these JSON paths (`answer`, `meta.model`, `items.0.id`)'),
    ),
    ignore: Type.Optional(Paths('Compare everything but these JSON paths')),
  },
  {
    additionalProperties: false,
    description: 'How results are compared; whole JSON equality when absent',
  },
);

/** `PUT /v1/capabilities/:capability/shadow` body. */
export const ShadowSettingsBody = Type.Object(
  {
    rate: Type.Number({
      minimum: 0,
      maximum: 1,
      description: "Share of the capability's tasks mirrored to its observing agents",
    }),
    compare: Type.Optional(Compare),
  },
  { additionalProperties: false },
);
export type ShadowSettingsBody = Static<typeof ShadowSettingsBody>;

/** A capability's shadow settings as in force. */
export const ShadowSettingsView = Type.Object({
  capability: Type.String(),
  rate: Type.Number(),
  compare: Type.Optional(Compare),
  source: Type.Union([Type.Literal('capability'), Type.Literal('default')], {
    description: '`capability`: set by the API; `default`: REACH_SHADOW_RATE',
  }),
});
export type ShadowSettingsView = Static<typeof ShadowSettingsView>;

const Side = Type.Object({
  tasks: Type.Integer({ description: 'Tasks with an outcome on this side' }),
  success_rate: Type.Union([Type.Number(), Type.Null()], {
    description: 'Completed ÷ tasks; null without tasks',
  }),
  p50_ms: Type.Union([Type.Number(), Type.Null()]),
  p95_ms: Type.Union([Type.Number(), Type.Null()]),
});

/** `GET /v1/agents/:agent_id/observation` reply. */
export const ObservationReport = Type.Object({
  agent_id: Type.String(),
  observe: Type.Boolean({ description: 'Still in observation mode' }),
  capabilities: Type.Array(Type.String()),
  mirrored: Type.Integer({
    description: 'Shadow copies with an outcome kept (the newest, up to REACH_SHADOW_KEEP)',
  }),
  compared: Type.Integer({
    description:
      'Of them, those whose task the serving agents finished, over which the rest is reckoned',
  }),
  observer: Side,
  serving: Side,
  agreement_rate: Type.Union([Type.Number(), Type.Null()], {
    description: 'Results that agree ÷ tasks both sides completed; null without such tasks',
  }),
  disagreements: Type.Array(
    Type.Object({
      task_id: Type.String(),
      capability: Type.String(),
      serving_agent: Type.String(),
      differing: Type.Array(Type.String(), {
        description: 'The compared paths that differ (empty when compared whole)',
      }),
      observed: Type.Unknown(),
      served: Type.Unknown(),
    }),
    { description: 'A sample: the newest ten' },
  ),
  since: Type.Union([Type.Integer(), Type.Null()], { description: 'Oldest record, epoch ms' }),
});
export type ObservationReport = Static<typeof ObservationReport>;
