import type { AgentStatus, RegistrySnapshot, SnapshotAgent } from '@agent-reach/protocol';
import { mulberry32 } from '@agent-reach/dispatch';

/** A small deterministic PRNG, so every run ranks the same fleet. */
export const prng = mulberry32;

/** Capability names of a synthetic fleet. */
export function capabilityNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `capability-${String(i).padStart(3, '0')}`);
}

const CONCURRENCY = [1, 2, 4, 8, 16, 32] as const;
const REGIONS = ['eu-west', 'us-east', 'ap-south'] as const;

function status(r: number): AgentStatus {
  if (r < 0.93) return 'HEALTHY';
  if (r < 0.96) return 'SUSPECT';
  if (r < 0.98) return 'OFFLINE';
  return 'DRAINING';
}

/**
 * A registry snapshot as registry-sync writes it: `agents` agents over `capabilities`
 * capabilities, each agent serving 1–3 of them (so each capability has about 2·agents/capabilities
 * candidates), mostly HEALTHY, with varied concurrency and load, a few ejected.
 */
export function syntheticSnapshot(
  agents: number,
  capabilities: number,
  seed = 42,
): RegistrySnapshot {
  const rand = prng(seed);
  const caps = capabilityNames(capabilities);
  const now = Date.now();
  const list: SnapshotAgent[] = [];
  for (let i = 0; i < agents; i++) {
    const served = new Set<string>([caps[i % capabilities] as string]);
    const extra = Math.floor(rand() * 3);
    for (let k = 0; k < extra; k++) served.add(caps[Math.floor(rand() * capabilities)] as string);
    const max = CONCURRENCY[Math.floor(rand() * CONCURRENCY.length)] as number;
    const agent: SnapshotAgent = {
      agent_id: `agent-${i.toString(36)}-${Math.floor(rand() * 0xffffff).toString(16)}`,
      instance_id: `${Math.floor(rand() * 2 ** 32).toString(16)}-${Math.floor(rand() * 2 ** 32).toString(16)}`,
      epoch: 1 + Math.floor(rand() * 5),
      status: status(rand()),
      capabilities: [...served],
      max_concurrency: max,
      // A third idle (ties broken by the ring), the rest with some load.
      inflight: rand() < 0.33 ? 0 : Math.floor(rand() * (max + 1)),
      region: REGIONS[Math.floor(rand() * REGIONS.length)] as string,
      channel: 'push',
      lease_age_ms: Math.floor(rand() * 5000),
      ...(rand() < 0.01 ? { ejected_until: now + 30_000 } : {}),
    };
    list.push(agent);
  }
  return { version: 1, written_at: now, agents: list };
}

/** The snapshot's JSON text with a given version, as the router reads it from Redis. */
export function snapshotText(snapshot: RegistrySnapshot, version: number): string {
  return JSON.stringify({ ...snapshot, version });
}
