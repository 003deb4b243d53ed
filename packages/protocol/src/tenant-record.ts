import { Type, type Static } from '@sinclair/typebox';
import { TENANT_PATTERN } from './tenants.ts';

/**
 * Tenant records (docs/SECURITY.md, Tenants): what an operator sets per tenant — its weight
 * against other tenants on a saturated capability and its bounds in a capability's waiting room
 * (docs/ROUTING.md, Waiting room). A tenant with no record has the defaults below.
 */

/** A tenant's weight when it has no record, or its record sets none. */
export const DEFAULT_TENANT_WEIGHT = 1;
/** The largest `fairness_weight` a submission may give when its tenant's record sets no cap. */
export const DEFAULT_MAX_FAIRNESS_WEIGHT = 10;

/** Fields of a tenant's hash (`keys.tenant(tenant)`), as the body and the view name them. */
export const TenantField = {
  weight: 'weight',
  maxQueued: 'max_queued',
  maxInflight: 'max_inflight',
  maxFairnessWeight: 'max_fairness_weight',
  updatedAt: 'updated_at',
  /** The secret webhook deliveries are signed with (`whsec_…`); never shown by the record's view. */
  webhookSecret: 'webhook_secret',
  /** The secret before the last rotation, signing too until `webhook_secret_previous_until`. */
  webhookSecretPrevious: 'webhook_secret_previous',
  /** Epoch ms until which the previous secret signs deliveries too. */
  webhookSecretPreviousUntil: 'webhook_secret_previous_until',
} as const;

/** `/v1/tenants/:tenant` params. */
export const TenantParams = Type.Object({
  tenant: Type.String({ pattern: TENANT_PATTERN, description: 'Tenant name' }),
});
export type TenantParams = Static<typeof TenantParams>;

const Weight = (description: string) => Type.Number({ minimum: 0.01, maximum: 1000, description });
const Bound = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 10_000_000, description });

/** `PUT /v1/tenants/:tenant` body: the fields to change; the others keep their values. */
export const TenantUpdate = Type.Object(
  {
    weight: Type.Optional(
      Weight("Share of a saturated capability's slots relative to the other tenants waiting"),
    ),
    max_queued: Type.Optional(
      Bound("Most tasks of the tenant waiting in one capability's waiting room; 0 = the default"),
    ),
    max_inflight: Type.Optional(
      Bound('Most slots of one capability the tenant holds at once; 0 = no cap'),
    ),
    max_fairness_weight: Type.Optional(
      Weight('Largest fairness_weight a submission of the tenant may give; larger ones are capped'),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type TenantUpdate = Static<typeof TenantUpdate>;

/** A tenant's record as the API shows it: the defaults for a tenant with none. */
export const TenantView = Type.Object({
  tenant: Type.String(),
  weight: Type.Number(),
  max_queued: Type.Integer({ description: '0 = the router default' }),
  max_inflight: Type.Integer({ description: '0 = no cap' }),
  max_fairness_weight: Type.Number(),
  updated_at: Type.Integer({ description: 'Epoch ms of the last change; 0 = never set' }),
});
export type TenantView = Static<typeof TenantView>;

/** `GET /v1/tenants` reply: every tenant with a record, by name. */
export const TenantsReply = Type.Object({ tenants: Type.Array(TenantView) });
export type TenantsReply = Static<typeof TenantsReply>;

/** The view of a tenant with no record. */
export function defaultTenantView(tenant: string): TenantView {
  return {
    tenant,
    weight: DEFAULT_TENANT_WEIGHT,
    max_queued: 0,
    max_inflight: 0,
    max_fairness_weight: DEFAULT_MAX_FAIRNESS_WEIGHT,
    updated_at: 0,
  };
}

/**
 * The view of a tenant's hash as read from Redis; a field absent or not a number in range keeps
 * its default (a hash edited by hand never yields a weight of 0 or NaN).
 */
export function decodeTenantRecord(tenant: string, hash: Record<string, string>): TenantView {
  const view = defaultTenantView(tenant);
  const num = (field: string, min: number, max: number, fallback: number): number => {
    const raw = hash[field];
    const n = raw === undefined || raw === '' ? NaN : Number(raw);
    return Number.isFinite(n) && n >= min && n <= max ? n : fallback;
  };
  return {
    tenant,
    weight: num(TenantField.weight, 0.01, 1000, view.weight),
    max_queued: Math.floor(num(TenantField.maxQueued, 0, 10_000_000, view.max_queued)),
    max_inflight: Math.floor(num(TenantField.maxInflight, 0, 10_000_000, view.max_inflight)),
    max_fairness_weight: num(TenantField.maxFairnessWeight, 0.01, 1000, view.max_fairness_weight),
    updated_at: Math.floor(num(TenantField.updatedAt, 0, Number.MAX_SAFE_INTEGER, 0)),
  };
}
