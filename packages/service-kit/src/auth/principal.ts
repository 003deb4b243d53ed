import type { FastifyRequest } from 'fastify';
import { DEFAULT_TENANT } from '@agent-reach/protocol';

/**
 * What an API key may do (docs/SECURITY.md). `relay`: a relay's key, which registers the
 * declared endpoint agents it serves (of any tenant) and nothing else.
 */
export type Role = 'caller' | 'operator' | 'agent' | 'relay';

/** Every role, in the order the docs list them. */
export const ROLES: readonly Role[] = ['caller', 'operator', 'agent', 'relay'];

/**
 * The roles a `key` route takes when its config names none. Not `relay`: a relay's key acts for
 * every tenant's endpoint agents, so it may call only the routes that name it.
 */
export const DEFAULT_ROLES: readonly Role[] = ['caller', 'operator', 'agent'];

/** Who made a request: the key it carried, or the open principal while auth is off. */
export interface Principal {
  /** The key's id (`open` while auth is off). */
  readonly keyId: string;
  readonly tenant: string;
  readonly role: Role;
  /** Capabilities the key may submit to or serve; `['*']` for any. */
  readonly capabilities: readonly string[];
  /** True while auth is off (loopback only): every request is this principal. */
  readonly open: boolean;
}

/** The principal of every request while auth is off: an operator of the default tenant. */
export const OPEN_PRINCIPAL: Principal = Object.freeze({
  keyId: 'open',
  tenant: DEFAULT_TENANT,
  role: 'operator',
  capabilities: Object.freeze(['*']),
  open: true,
});

/**
 * The principal of a request to a public or agent-token route while keys are required: it
 * carried no API key, so it may see nothing (no tenant, no capabilities). Such routes should not
 * need a principal; this keeps {@link principalOf} from ever answering {@link OPEN_PRINCIPAL}
 * for a request that was not let in as open.
 */
export const ANONYMOUS_PRINCIPAL: Principal = Object.freeze({
  keyId: 'anonymous',
  tenant: '',
  role: 'caller',
  capabilities: Object.freeze([]),
  open: false,
});

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth plugin before any handler runs. */
    principal?: Principal;
  }
}

/** The request's principal ({@link OPEN_PRINCIPAL} when no auth plugin set one). */
export function principalOf(request: FastifyRequest): Principal {
  return request.principal ?? OPEN_PRINCIPAL;
}

/** True when the principal may submit to or serve `capability`. */
export function mayUseCapability(principal: Principal, capability: string): boolean {
  return principal.capabilities.includes('*') || principal.capabilities.includes(capability);
}

/** True when the principal sees every tenant's tasks, topics, dead letters and stats. */
export function seesAllTenants(principal: Principal): boolean {
  return principal.role === 'operator';
}
