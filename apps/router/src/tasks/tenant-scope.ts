import {
  DEFAULT_TENANT,
  isIdRef,
  isValidScopedId,
  scopedId,
  splitScopedId,
} from '@agent-reach/protocol';
import { seesAllTenants, type Principal } from '@agent-reach/service-kit';

/**
 * What one request may name and see of tasks, callback topics and dead letters (docs/SECURITY.md,
 * Tenants). Inside Redis a tenant's ids are scoped (`<tenant>/<id>`, bare for the default
 * tenant); at the API edge a requester names and sees ids relative to its own tenant:
 *
 * - a bare id is one of the requester's own tenant;
 * - `<tenant>/<id>` names another tenant's: only an operator (who sees every tenant) may, for
 *   anyone else it names nothing (404, never 403, so nothing tells that it exists);
 * - ids of the requester's own tenant are shown bare, others (operators only) as `<tenant>/<id>`
 *   (`default/<id>` for the default tenant's, which `resolve` takes back).
 */
export class TenantScope {
  /** The requester's tenant: its submissions, topics and dead letters belong to it. */
  readonly tenant: string;
  /** Sees every tenant's tasks, topics, dead letters and stats (operators). */
  readonly all: boolean;

  constructor(tenant: string, all: boolean) {
    this.tenant = tenant;
    this.all = all;
  }

  /** The scope of a request's principal. */
  static of(principal: Principal): TenantScope {
    return new TenantScope(principal.tenant, seesAllTenants(principal));
  }

  /** The id inside Redis of a task or topic of the requester's own tenant (`id` is bare). */
  own(id: string): string {
    return scopedId(this.tenant, id);
  }

  /**
   * The id inside Redis that a name the requester gave stands for (bare or `<tenant>/<id>`), or
   * undefined when the requester may not see that tenant's (or the name is not an id).
   */
  resolve(name: string): string | undefined {
    if (!isIdRef(name)) return undefined;
    if (!name.includes('/')) return this.own(name);
    if (!isValidScopedId(name)) {
      // `default/<id>` is the default tenant's bare id written out.
      const { tenant, id } = splitScopedId(name);
      if (tenant !== DEFAULT_TENANT || !isValidScopedId(id) || id.includes('/')) return undefined;
      return this.sees(id) ? id : undefined;
    }
    return this.sees(name) ? name : undefined;
  }

  /** True when the requester may see what the scoped id belongs to. */
  sees(scoped: string): boolean {
    return this.all || splitScopedId(scoped).tenant === this.tenant;
  }

  /**
   * The id the requester sees for a scoped id: bare when it is of its own tenant, else
   * `<tenant>/<id>` (`default/<id>` for the default tenant's, seen from another tenant).
   */
  show(scoped: string): string {
    const { tenant, id } = splitScopedId(scoped);
    return tenant === this.tenant ? id : `${tenant}/${id}`;
  }

  /** The tenant of a scoped id. */
  static tenantOf(scoped: string): string {
    return splitScopedId(scoped).tenant;
  }
}
