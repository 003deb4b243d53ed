import { isValidId } from './ids.ts';

/**
 * Tenants (docs/SECURITY.md). Every key belongs to a tenant; a task, its callback topic, its dead
 * letter and its stats belong to the tenant of the key that submitted it. The default tenant is
 * the one of an open (loopback, auth off) deployment and of `REACH_ADMIN_KEY`.
 */
export const DEFAULT_TENANT = 'default';

/** A tenant name: lower-case letters, digits, `_` and `-`, 1–32 characters. */
export const TENANT_PATTERN = '^[a-z0-9][a-z0-9_-]{0,31}$';

const tenantRegExp = new RegExp(TENANT_PATTERN);

/** True when `value` is a valid tenant name. */
export function isValidTenant(value: unknown): value is string {
  return typeof value === 'string' && tenantRegExp.test(value);
}

/**
 * The id a tenant's task, topic or pool has inside Redis: `<tenant>/<id>`, or the bare id for the
 * default tenant (so an open deployment keeps its keys). `/` is never part of an id (ID_PATTERN),
 * so the same task_id from two tenants always gives two scoped ids.
 */
export function scopedId(tenant: string, id: string): string {
  return tenant === DEFAULT_TENANT ? id : `${tenant}/${id}`;
}

/** The tenant and the caller's id a scoped id stands for (the inverse of {@link scopedId}). */
export function splitScopedId(scoped: string): { tenant: string; id: string } {
  const slash = scoped.indexOf('/');
  if (slash < 0) return { tenant: DEFAULT_TENANT, id: scoped };
  return { tenant: scoped.slice(0, slash), id: scoped.slice(slash + 1) };
}

/** True when `value` is a valid id, bare or scoped (`<tenant>/<id>`). */
export function isValidScopedId(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const { tenant, id } = splitScopedId(value);
  return (
    isValidId(id) && (tenant === DEFAULT_TENANT ? !value.includes('/') : isValidTenant(tenant))
  );
}

/**
 * True when `value` has the form a requester names an id in: bare, or `<tenant>/<id>` (the API's
 * scoped id reference, `default/<id>` included). Whether the requester may see it is the scope's
 * question; this one only says the name is well formed, so that a malformed one is refused as
 * invalid input before anything builds a key from it.
 */
export function isIdRef(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const { tenant, id } = splitScopedId(value);
  return isValidId(id) && (value.includes('/') ? isValidTenant(tenant) : true);
}
