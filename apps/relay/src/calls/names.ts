import type { DiscoveredCapability } from './endpoint-client.ts';

/** The longest capability id, prefix included. */
export const CAPABILITY_MAX_LENGTH = 128;

/** Characters a capability id may not hold: each becomes a `.`. */
const OUTSIDE_ID = /[^A-Za-z0-9_.:-]/g;

/** A capability an endpoint serves, and the name the endpoint knows it by. */
export interface MappedCapability {
  capability: string;
  remoteName: string;
  inputSchema?: Record<string, unknown>;
}

/** A discovered (or declared) name that yields no capability, and why. */
export interface RefusedName {
  name: string;
  reason: string;
}

/** What {@link mapCapabilities} found. */
export interface CapabilityMapping {
  capabilities: MappedCapability[];
  refused: RefusedName[];
}

/**
 * The capability id a skill or tool name maps to: the prefix, then the name with every character
 * outside `[A-Za-z0-9_.:-]` replaced by `.` (`github/search` → `github.search`).
 */
export function capabilityOf(name: string, prefix = ''): string {
  return prefix + name.replace(OUTSIDE_ID, '.');
}

/**
 * The capabilities of an A2A or MCP endpoint from the skills or tools it lists, by
 * {@link capabilityOf}, in the order listed. Refused, each with a reason naming it: an empty
 * name; a capability longer than {@link CAPABILITY_MAX_LENGTH}; names that map to the same
 * capability (all of them: which one was meant cannot be told); and, when `declared` is given,
 * declared capabilities the endpoint does not list. `declared` (capability ids, prefix included)
 * restricts the result to those; a name listed twice counts once.
 */
export function mapCapabilities(
  discovered: readonly DiscoveredCapability[],
  declared?: readonly string[],
  prefix = '',
): CapabilityMapping {
  const refused: RefusedName[] = [];
  const byCapability = new Map<string, DiscoveredCapability[]>();
  for (const item of discovered) {
    const name = item.remoteName;
    if (name === '') {
      refused.push({ name, reason: 'the endpoint lists an empty name' });
      continue;
    }
    const capability = capabilityOf(name, prefix);
    if (capability.length > CAPABILITY_MAX_LENGTH) {
      refused.push({
        name,
        reason: `"${name}" maps to a capability of ${capability.length} characters, over ${CAPABILITY_MAX_LENGTH}`,
      });
      continue;
    }
    const same = byCapability.get(capability) ?? [];
    if (!same.some((other) => other.remoteName === name)) same.push(item);
    byCapability.set(capability, same);
  }

  const wanted = declared ? new Set(declared) : undefined;
  const capabilities: MappedCapability[] = [];
  for (const [capability, items] of byCapability) {
    if (items.length > 1) {
      for (const { remoteName } of items) {
        const others = items.filter((i) => i.remoteName !== remoteName).map((i) => i.remoteName);
        refused.push({
          name: remoteName,
          reason: `"${remoteName}" maps to "${capability}", as does ${others.map((o) => `"${o}"`).join(', ')}`,
        });
      }
      continue;
    }
    if (wanted && !wanted.has(capability)) continue;
    const { remoteName, inputSchema } = items[0]!;
    capabilities.push(
      inputSchema ? { capability, remoteName, inputSchema } : { capability, remoteName },
    );
  }

  for (const name of declared ?? []) {
    if (!byCapability.has(name))
      refused.push({ name, reason: `"${name}" is declared but the endpoint does not list it` });
  }
  return { capabilities, refused };
}
