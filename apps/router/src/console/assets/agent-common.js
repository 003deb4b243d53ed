// What the agents page's list and agent view share: the agents as `GET /v1/console/agents`
// answers them (the API scopes them to the key's tenant), and the cells that show an agent.
import { fmtMs, getJson, h } from './dom.js';

/**
 * @typedef {{ ok: boolean, latency_ms?: number, detail?: string }} Dependency
 * @typedef {{
 *   agent_id: string, instance_id?: string, epoch?: number, tenant: string, shared: boolean,
 *   status: string, capabilities: string[], max_concurrency: number, inflight: number,
 *   reported_inflight: number, region: string, channel: string, registered_at: number,
 *   last_heartbeat_at: number, lease_age_ms: number, ejected_until: number, health_score: number,
 *   health_samples?: number, degraded_until: number, tags: string[], observe: boolean,
 *   unreachable?: boolean, priority: number, weight: number, ewma_ms: Record<string, number>,
 *   runtime?: { loop_lag_p99_ms: number, gc_share?: number, rss_bytes: number },
 *   health_check?: { ok: boolean, at: number, dependencies: Record<string, Dependency> },
 *   dependency_down?: string,
 *   recent?: { completed: number, failed: number, failures_by_code: Record<string, number>, success_rate: number | null },
 * }} Agent
 * @typedef {{ agents: Agent[], total: number, sampled_tasks: number }} AgentsReply
 */

/** The agent statuses (packages/protocol AGENT_STATUSES), in the order the filter lists them. */
export const STATUSES = ['HEALTHY', 'DEGRADED', 'SUSPECT', 'STARTING', 'DRAINING', 'OFFLINE'];

/**
 * The agents the key may see, or the failed reply.
 * @returns {Promise<{ ok: true, reply: AgentsReply } | { ok: false, status: number, body: unknown }>}
 */
export async function loadAgents() {
  const { status, body } = await getJson('/v1/console/agents?limit=2000');
  if (status !== 200) return { ok: false, status, body };
  return { ok: true, reply: /** @type {AgentsReply} */ (body) };
}

/** @param {string} status */
export function statusPill(status) {
  return h('span', { class: `pill ${status.toLowerCase()}`, 'data-status': status }, [status]);
}

/**
 * Observing (gets probes and shadow copies, no caller traffic) or serving.
 * @param {Agent} a
 */
export function modeChip(a) {
  return h(
    'span',
    {
      class: a.observe ? 'chip mode observing' : 'chip mode serving',
      'data-mode': a.observe ? 'observing' : 'serving',
      title: a.observe
        ? 'Observation mode: probes and shadow copies only, until promoted'
        : 'Takes caller traffic',
    },
    [a.observe ? 'observing' : 'serving'],
  );
}

/**
 * A load meter and `inflight / max`.
 * @param {Agent} a
 */
export function loadCell(a) {
  const load = a.max_concurrency > 0 ? a.inflight / a.max_concurrency : 0;
  const meter = h('span', { class: 'meter' }, [h('b')]);
  /** @type {HTMLElement} */ (meter.firstChild).style.width =
    `${Math.min(100, Math.round(load * 100))}%`;
  return [meter, h('span', { class: 'num' }, [`${a.inflight} / ${a.max_concurrency}`])];
}

/**
 * The health score, warned under 80.
 * @param {Agent} a
 */
export function healthText(a) {
  return h(
    'span',
    {
      class: a.health_score < 80 ? 'num warn-text' : 'num',
      title:
        'From its recent outcomes: failures, timeouts, lapsed leases, failed probes, slow completions',
    },
    [String(a.health_score)],
  );
}

/**
 * The runtime figures of the agent's last heartbeat (event-loop delay p99, time in GC, memory),
 * warned past the points where they start to cost it health (docs/ROUTING.md); or `–`.
 * @param {Pick<Agent, 'runtime'>} a
 */
export function runtimeText(a) {
  const r = a.runtime;
  if (!r) return h('span', { class: 'muted' }, ['–']);
  const slow = r.loop_lag_p99_ms > 250 || (r.gc_share ?? 0) > 0.1;
  const parts = [
    `loop ${Math.round(r.loop_lag_p99_ms)} ms`,
    r.gc_share !== undefined ? `gc ${Math.round(r.gc_share * 100)} %` : '',
    `${Math.round(r.rss_bytes / 1048576)} MB`,
  ].filter(Boolean);
  return h(
    'span',
    {
      class: slow ? 'num warn-text' : 'num',
      'data-runtime': '',
      title: 'Event-loop delay p99, share of time in garbage collection, resident memory',
    },
    [parts.join(' · ')],
  );
}

/**
 * Chips for a list of words (capabilities, tags), or `–`.
 * @param {string[]} words
 * @param {string} [kind] data-kind of each chip
 */
export function chips(words, kind) {
  if (words.length === 0) return [h('span', { class: 'muted' }, ['–'])];
  return words.map((w) => h('span', { class: 'chip', 'data-kind': kind }, [w]));
}

/**
 * The heartbeat's age, warned past 15 s.
 * @param {Agent} a
 */
export function leaseText(a) {
  return h('span', { class: a.lease_age_ms > 15_000 ? 'num warn-text' : 'num' }, [
    `${fmtMs(a.lease_age_ms)} ago`,
  ]);
}

/**
 * The link to an agent's view.
 * @param {string} agentId
 */
export function agentHref(agentId) {
  return `/console/agents/${encodeURIComponent(agentId)}`;
}
