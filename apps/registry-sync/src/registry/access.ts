import type { AgentView, RegisterBody } from '@agent-reach/protocol';
import {
  httpError,
  mayUseCapability,
  seesAllTenants,
  type Principal,
} from '@agent-reach/service-kit';
import { withoutInstance } from '@agent-reach/protocol';

/**
 * Checks that `principal` may register `body` (docs/SECURITY.md): a key of role agent or
 * operator (the route admits no other), whose capabilities cover every capability declared;
 * `shared` (serve every tenant) only with an operator key. Throws 403 FORBIDDEN otherwise.
 */
export function checkRegistration(body: RegisterBody, principal: Principal): void {
  const missing = body.capabilities.filter((c) => !mayUseCapability(principal, c));
  if (missing.length > 0)
    throw httpError(
      'FORBIDDEN',
      `this key may not serve ${missing.join(', ')}; register with a key whose capabilities cover them`,
    );
  if (body.shared === true && principal.role !== 'operator')
    throw httpError('FORBIDDEN', 'only an operator key may register a shared agent');
}

/**
 * Whether `principal` sees an agent: operators see every agent; other keys the agents of their
 * tenant and the shared ones (which serve them too).
 */
export function seesAgent(principal: Principal, view: AgentView): boolean {
  return seesAllTenants(principal) || view.shared || view.tenant === principal.tenant;
}

/** The agent as `principal` sees it: instance_id and epoch for operators only. */
export function agentAsSeenBy(principal: Principal, view: AgentView): AgentView {
  return seesAllTenants(principal) ? view : withoutInstance(view);
}
