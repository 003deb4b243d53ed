import { A2A_PROTOCOL_VERSION, AgentCard, type AgentSkill } from '@a2a-js/sdk';
import type { SnapshotAgent } from '@agent-reach/protocol';
import { servesTenant, type SnapshotHolder } from '@agent-reach/dispatch';

/** The name of the API-key security scheme the cards declare. */
export const API_KEY_SCHEME = 'reachApiKey';

/** Media types a capability endpoint takes and gives: text parts and JSON data parts. */
const MODES = ['text/plain', 'application/json'];

/** Agent statuses that take no new tasks: their capabilities are not offered. */
const NOT_LIVE = new Set(['OFFLINE', 'DRAINING']);

/** What the cards are built from. */
export interface CardSource {
  snapshot: SnapshotHolder;
  /** Whether the router wants an API key: the cards then require the scheme. */
  authRequired: boolean;
}

/** The agents that serve `capability` for `tenant` now: live, serving, of its tenant or shared. */
export function liveAgents(
  snapshot: SnapshotHolder,
  capability: string,
  tenant: string,
): SnapshotAgent[] {
  return snapshot
    .agentsFor(capability)
    .filter((a) => !NOT_LIVE.has(a.status) && a.observe !== true && servesTenant(a, tenant));
}

/** The capabilities some agent serves for `tenant` now, sorted, each with its live agents. */
export function liveCapabilities(
  snapshot: SnapshotHolder,
  tenant: string,
): { capability: string; agents: SnapshotAgent[] }[] {
  const out: { capability: string; agents: SnapshotAgent[] }[] = [];
  for (const capability of snapshot.capabilities()) {
    const agents = liveAgents(snapshot, capability, tenant);
    if (agents.length > 0) out.push({ capability, agents });
  }
  return out.sort((a, b) => (a.capability < b.capability ? -1 : 1));
}

/** The skill of one capability: its id is the capability, its tags the agents' tags. */
function skillOf(capability: string, agents: readonly SnapshotAgent[]): AgentSkill {
  const tags = new Set<string>([capability]);
  for (const a of agents) for (const t of a.tags ?? []) tags.add(t);
  return {
    id: capability,
    name: capability,
    description: `Runs a task on capability "${capability}", routed to the least loaded of its ${agents.length} live agent${agents.length === 1 ? '' : 's'}. A data part is the task's payload as it is; text parts are {"text": …}.`,
    tags: [...tags],
    examples: [],
    inputModes: MODES,
    outputModes: MODES,
    securityRequirements: [],
  };
}

/** The card skeleton every card shares: provider, capabilities, security. */
function card(
  source: CardSource,
  base: string,
  fields: Pick<AgentCard, 'name' | 'description' | 'skills'> & { url: string },
): AgentCard {
  return {
    name: fields.name,
    description: fields.description,
    supportedInterfaces: [
      {
        url: fields.url,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
    ],
    provider: { organization: 'Agent-Reach', url: base },
    // The registry snapshot the card was built from: a new one may change the skills.
    version: `registry-${source.snapshot.info().version}`,
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions: [],
      extendedAgentCard: false,
    },
    securitySchemes: {
      [API_KEY_SCHEME]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            scheme: 'Bearer',
            bearerFormat: '',
            description:
              'An Agent-Reach API key (docs/SECURITY.md): Authorization: Bearer <key>. Required when the router runs with REACH_AUTH=required.',
          },
        },
      },
    },
    securityRequirements: source.authRequired
      ? [{ schemes: { [API_KEY_SCHEME]: { list: [] } } }]
      : [],
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: fields.skills,
    signatures: [],
  };
}

/**
 * The fleet's card (`/.well-known/agent-card.json`): one skill per capability some live agent
 * serves for `tenant`; its endpoint `/a2a` takes the capability from a message's
 * `metadata.capability`. Built per request from the snapshot the router routes by.
 */
export function fleetCard(source: CardSource, base: string, tenant: string): AgentCard {
  const skills = liveCapabilities(source.snapshot, tenant).map((c) =>
    skillOf(c.capability, c.agents),
  );
  return card(source, base, {
    name: 'Agent-Reach fleet',
    description:
      'Every capability of an Agent-Reach fleet, each routed by live load to one of its agents. Send to /a2a/<capability> (its own card is at /a2a/<capability>/.well-known/agent-card.json), or here with metadata.capability.',
    skills,
    url: `${base}/a2a`,
  });
}

/** The card of one capability, or undefined when no live agent serves it for `tenant`. */
export function capabilityCard(
  source: CardSource,
  base: string,
  capability: string,
  tenant: string,
): AgentCard | undefined {
  const agents = liveAgents(source.snapshot, capability, tenant);
  if (agents.length === 0) return undefined;
  return card(source, base, {
    name: capability,
    description: `Agent-Reach capability "${capability}": each task goes to the least loaded of its live agents.`,
    skills: [skillOf(capability, agents)],
    url: `${base}/a2a/${capability}`,
  });
}

/** A card as its JSON document (the protobuf JSON form the SDK's client reads). */
export function cardJson(value: AgentCard): unknown {
  return AgentCard.toJSON(value);
}
