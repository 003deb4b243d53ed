/**
 * What an agent's deep health check says beyond yes or no: the state of each dependency it
 * needs (a model gateway, a vector store). The SDKs put it on a probe's ack (`health`, JSON
 * text), registry-sync keeps the latest with the agent and flags a dependency that fails on
 * several agents at once (docs/PROTOCOL.md §6, Dependencies). Agents in any language send it, so
 * it is cleaned, never trusted: a bad entry is dropped, never a reason to refuse the probe.
 */

/** One dependency as a health check reports it. */
export interface DependencyState {
  ok: boolean;
  latency_ms?: number;
  detail?: string;
}

/** A health check's answer with its dependencies. */
export interface ProbeHealth {
  ok: boolean;
  dependencies: Record<string, DependencyState>;
}

/** The health kept with an agent: the latest probe's answer, and when it came. */
export interface AgentHealthCheck extends ProbeHealth {
  /** When the probe's ack was applied, epoch ms (Redis time). */
  at: number;
}

/** Most dependencies one answer keeps (the first ones, in the order given). */
export const MAX_DEPENDENCIES = 32;
/** Longest `detail` kept, in characters. */
export const MAX_DEPENDENCY_DETAIL = 256;
/** A dependency's name: what agents sharing it must all call it. */
export const DEPENDENCY_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The dependency map of an answer, cleaned: bad names, shapes and the excess dropped. */
export function cleanDependencies(raw: unknown): Record<string, DependencyState> {
  const out: Record<string, DependencyState> = {};
  if (!isRecord(raw)) return out;
  let kept = 0;
  for (const [name, value] of Object.entries(raw)) {
    if (kept >= MAX_DEPENDENCIES) break;
    if (!DEPENDENCY_NAME.test(name) || !isRecord(value) || typeof value.ok !== 'boolean') continue;
    const dep: DependencyState = { ok: value.ok };
    const latency = value.latency_ms;
    if (typeof latency === 'number' && Number.isFinite(latency) && latency >= 0)
      dep.latency_ms = Math.round(latency);
    if (typeof value.detail === 'string') dep.detail = value.detail.slice(0, MAX_DEPENDENCY_DETAIL);
    out[name] = dep;
    kept++;
  }
  return out;
}

/**
 * A health check's answer as a probe reports it: `true`/`false`, or `{ok?, dependencies?}` where
 * a missing `ok` means "every dependency ok". Undefined for anything else (the probe fails).
 */
export function probeHealthOf(answer: unknown): ProbeHealth | undefined {
  if (typeof answer === 'boolean') return { ok: answer, dependencies: {} };
  if (!isRecord(answer)) return undefined;
  const dependencies = cleanDependencies(answer.dependencies);
  const ok =
    typeof answer.ok === 'boolean' ? answer.ok : Object.values(dependencies).every((d) => d.ok);
  return { ok, dependencies };
}

/** The names of the dependencies an answer reports down, sorted. */
export function failingDependencies(health: ProbeHealth | undefined): string[] {
  if (!health) return [];
  return Object.entries(health.dependencies)
    .filter(([, d]) => !d.ok)
    .map(([name]) => name)
    .sort();
}

/** Reads a probe ack's `health` field (JSON text); undefined when absent or unreadable. */
export function decodeProbeHealth(text: string | undefined): ProbeHealth | undefined {
  if (text === undefined || text === '' || text.length > 64 * 1024) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? probeHealthOf(parsed) : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the health kept with an agent (its record's `health_check`); undefined when none. */
export function decodeAgentHealthCheck(
  text: string | undefined | null,
): AgentHealthCheck | undefined {
  if (!text) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isRecord(parsed) || typeof parsed.at !== 'number') return undefined;
    const health = probeHealthOf(parsed);
    return health ? { ...health, at: parsed.at } : undefined;
  } catch {
    return undefined;
  }
}
