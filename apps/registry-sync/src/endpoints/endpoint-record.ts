import {
  ENDPOINT_DEFAULT_CONCURRENCY,
  ENDPOINT_TIMEOUT_MS,
  PROBE_CAPABILITY,
  type EndpointBody,
  type EndpointRecord,
  type EndpointSecrets,
  type EndpointSource,
} from '@agent-reach/protocol';

/** Who declares an endpoint agent, and when. */
export interface DeclarationContext {
  agentId: string;
  /** The declaring key's tenant: the agent's. */
  tenant: string;
  /** The capabilities the declaring key covers (`['*']` for any). */
  keyCapabilities: readonly string[];
  source: EndpointSource;
  /** Epoch ms of this declaration. */
  now: number;
  /** The replaced declaration's `created_at`, kept. */
  createdAt?: number;
}

/** A declaration split as it is stored: the record, and its secrets apart (none: undefined). */
export interface StoredDeclaration {
  record: EndpointRecord;
  secrets: EndpointSecrets | undefined;
}

/**
 * What is wrong with a declaration beyond its schema, or undefined: an `http` endpoint names
 * its capabilities (there is no card or tool list to discover them from), and none is the
 * liveness probes' reserved capability.
 */
export function declarationProblem(body: EndpointBody): string | undefined {
  if (body.protocol === 'http' && body.capabilities === undefined)
    return 'an http endpoint needs capabilities: the capabilities it serves (a2a and mcp endpoints discover theirs)';
  if (body.capabilities?.includes(PROBE_CAPABILITY))
    return `capability ${PROBE_CAPABILITY} is reserved for liveness probes; leave it out of capabilities`;
  return undefined;
}

/** The record and secrets a declaration is stored as; fields the body leaves out stay out. */
export function storedDeclaration(body: EndpointBody, c: DeclarationContext): StoredDeclaration {
  const record: EndpointRecord = {
    agent_id: c.agentId,
    protocol: body.protocol,
    url: body.url,
    ...(body.capabilities !== undefined ? { capabilities: [...body.capabilities] } : {}),
    ...(body.capability_prefix !== undefined ? { capability_prefix: body.capability_prefix } : {}),
    max_concurrency: body.max_concurrency ?? ENDPOINT_DEFAULT_CONCURRENCY,
    ...(body.region !== undefined ? { region: body.region } : {}),
    ...(body.tags !== undefined ? { tags: [...body.tags] } : {}),
    shared: body.shared === true,
    ...(body.meta !== undefined ? { meta: body.meta } : {}),
    ...(body.health_url !== undefined ? { health_url: body.health_url } : {}),
    timeout_ms: body.timeout_ms ?? ENDPOINT_TIMEOUT_MS.default,
    ...(body.options !== undefined ? { options: body.options } : {}),
    tenant: c.tenant,
    key_capabilities: [...c.keyCapabilities],
    source: c.source,
    header_names: Object.keys(body.headers ?? {}),
    has_bearer_secret: body.bearer_secret !== undefined,
    created_at: c.createdAt ?? c.now,
    updated_at: c.now,
  };
  const secrets: EndpointSecrets = {
    ...(body.headers !== undefined && Object.keys(body.headers).length > 0
      ? { headers: { ...body.headers } }
      : {}),
    ...(body.bearer_secret !== undefined ? { bearer_secret: body.bearer_secret } : {}),
  };
  return { record, secrets: Object.keys(secrets).length > 0 ? secrets : undefined };
}

/**
 * True when two declarations say the same, their times aside: the endpoints file writes an
 * entry again only when it changed.
 */
export function sameDeclaration(
  a: StoredDeclaration,
  b: { record: EndpointRecord; secrets: string | undefined },
): boolean {
  const untimed = ({ created_at: _c, updated_at: _u, ...rest }: EndpointRecord) =>
    JSON.stringify(rest);
  const secrets = a.secrets === undefined ? undefined : JSON.stringify(a.secrets);
  return untimed(a.record) === untimed(b.record) && secrets === b.secrets;
}
