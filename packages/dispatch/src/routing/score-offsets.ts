import type { SnapshotAgent } from '@agent-reach/protocol';

/** The part of the policy's settings a score offset depends on. */
export interface OffsetSettings {
  slowFactor: number;
  slowPenalty: number;
  maxBias: number;
  healthPenalty: number;
  healthFloor: number;
}

interface Cached {
  capability: string;
  settings: OffsetSettings;
  offsets: ScoreOffsets;
}

/**
 * Per agent, what its score adds to its load: `load + health[i] + penalty[i] − bias[i]` (in that
 * order, as the policy states it). `load + health[i]` is its adjusted load, which the watermark
 * is compared with too.
 */
export interface ScoreOffsets {
  health: Float64Array;
  penalty: Float64Array;
  bias: Float64Array;
}

/**
 * Per agent list, the offsets last computed for it. A snapshot holder hands out one list per
 * capability and snapshot, and a snapshot is never changed in place, so a list seen again has the
 * same offsets; a new snapshot brings new lists.
 */
const cache = new WeakMap<readonly SnapshotAgent[], Cached>();

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

function capabilityMeanMs(
  agents: readonly SnapshotAgent[],
  capability: string,
): number | undefined {
  let sum = 0;
  let count = 0;
  for (const a of agents) {
    const v = a.ewma_ms?.[capability];
    if (typeof v === 'number' && v > 0) {
      sum += v;
      count++;
    }
  }
  return count >= 2 ? sum / count : undefined;
}

/** The score's penalty for an agent slower than `slowFactor` × the capability's mean. */
function slowness(
  a: SnapshotAgent,
  capability: string,
  mean: number | undefined,
  settings: OffsetSettings,
): number {
  if (mean === undefined) return 0;
  const ewma = a.ewma_ms?.[capability];
  return ewma !== undefined && ewma > settings.slowFactor * mean ? settings.slowPenalty : 0;
}

/**
 * The score's penalty for an agent's health score below the floor: `healthPenalty` load units per
 * 100 points it lacks, so an agent failing 5 % of its tasks (95) looks 0.5 fuller than it is.
 */
export function healthPenaltyOf(a: SnapshotAgent, settings: OffsetSettings): number {
  const score = a.health_score ?? 100;
  return score >= settings.healthFloor ? 0 : (settings.healthPenalty * (100 - score)) / 100;
}

const sameSettings = (x: OffsetSettings, y: OffsetSettings) =>
  x.slowFactor === y.slowFactor &&
  x.slowPenalty === y.slowPenalty &&
  x.maxBias === y.maxBias &&
  x.healthPenalty === y.healthPenalty &&
  x.healthFloor === y.healthFloor;

/** The score's bounded bonus for priority and weight. */
function bias(a: SnapshotAgent, settings: OffsetSettings): number {
  if (a.priority === undefined && a.weight === undefined) return 0;
  return (
    clamp(0.01 * (a.priority ?? 0), 0, settings.maxBias) +
    clamp(settings.maxBias * ((a.weight ?? 1) - 1), -settings.maxBias, settings.maxBias)
  );
}

/**
 * What each agent's score adds to its load for `capability`: the slow-agent penalty (against the
 * capability's mean execution time) and the health penalty, minus the priority and weight bias.
 * All come from the snapshot alone, so they are computed once per list and settings, not once per decision.
 */
export function scoreOffsets(
  agents: readonly SnapshotAgent[],
  capability: string,
  settings: OffsetSettings,
): ScoreOffsets {
  const hit = cache.get(agents);
  if (
    hit &&
    hit.capability === capability &&
    sameSettings(hit.settings, settings) &&
    hit.offsets.penalty.length === agents.length
  ) {
    return hit.offsets;
  }
  const mean = capabilityMeanMs(agents, capability);
  const offsets: ScoreOffsets = {
    health: new Float64Array(agents.length),
    penalty: new Float64Array(agents.length),
    bias: new Float64Array(agents.length),
  };
  for (let i = 0; i < agents.length; i++) {
    const a = agents[i] as SnapshotAgent;
    offsets.health[i] = healthPenaltyOf(a, settings);
    offsets.penalty[i] = slowness(a, capability, mean, settings);
    offsets.bias[i] = bias(a, settings);
  }
  cache.set(agents, {
    capability,
    settings: {
      slowFactor: settings.slowFactor,
      slowPenalty: settings.slowPenalty,
      maxBias: settings.maxBias,
      healthPenalty: settings.healthPenalty,
      healthFloor: settings.healthFloor,
    },
    offsets,
  });
  return offsets;
}
