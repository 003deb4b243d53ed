import type { CatalogEntry } from './catalog.ts';
import type { Discovery, EndpointClient } from './calls/endpoint-client.ts';
import { mapCapabilities } from './calls/names.ts';

/** What an endpoint agent is registered with, and how its capabilities map to its names. */
export interface ResolvedCapabilities {
  capabilities: string[];
  /** Capability → the skill or tool name the endpoint knows it by. */
  remoteNames: Map<string, string>;
  inputSchemas: Record<string, unknown>;
  card?: Record<string, unknown>;
  /** Discovered names that could not become capabilities, with why. */
  refused: { name: string; reason: string }[];
}

/**
 * The capabilities of an endpoint agent: declared (`http`), or discovered from the endpoint (an
 * A2A card's skills, an MCP server's tools) and mapped by the stated rule (calls/names.ts).
 */
export async function resolveCapabilities(
  entry: CatalogEntry,
  client: EndpointClient,
): Promise<ResolvedCapabilities> {
  const { record } = entry;
  if (record.protocol === 'http') {
    const caps = record.capabilities ?? [];
    return {
      capabilities: caps,
      remoteNames: new Map(caps.map((c) => [c, c])),
      inputSchemas: {},
      refused: [],
    };
  }
  const found: Discovery = await client.discover();
  const mapped = mapCapabilities(found.capabilities, record.capabilities, record.capability_prefix);
  const inputSchemas: Record<string, unknown> = {};
  for (const c of mapped.capabilities)
    if (c.inputSchema) inputSchemas[c.capability] = c.inputSchema;
  return {
    capabilities: mapped.capabilities.map((c) => c.capability),
    remoteNames: new Map(mapped.capabilities.map((c) => [c.capability, c.remoteName])),
    inputSchemas,
    ...(found.card ? { card: found.card } : {}),
    refused: mapped.refused,
  };
}
