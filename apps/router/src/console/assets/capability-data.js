// What the capabilities page reads, all through the public API in the key's tenant scope: the
// agents (GET /v1/console/agents), the waiting rooms (GET /v1/queues), the four figures
// (GET /v1/stats) and a capability's series (GET /v1/stats/series).
import { getJson } from './dom.js';

/**
 * @typedef {import('./rooms.js').Room} Room
 * @typedef {import('./figures.js').FigureGroup} FigureGroup
 * @typedef {{ agent_id: string, status: string, tenant: string, shared: boolean, capabilities: string[],
 *   inflight: number, max_concurrency: number, region: string, health_score: number, channel: string,
 *   unreachable?: boolean, meta: Record<string, unknown> }} Agent
 * @typedef {{ at: number, completed: number, failed: number, dead: number,
 *   execution_mean_ms: number | null, execution_p95_ms: number | null }} SeriesPoint
 * @typedef {{ capability: string, window: string, step: string, step_ms: number, points: SeriesPoint[] }} SeriesReply
 * @typedef {{ status: number, body: unknown }} Reply
 */

/** Liveness probes (PROBE_CAPABILITY of the protocol) are not work: never listed. */
export const PROBE_CAPABILITY = '_probe';

/**
 * How a relay-served endpoint agent (docs/ENDPOINTS.md) calls its endpoint, or undefined for an
 * agent that registered itself: the registration puts the protocol in the agent's meta.
 * @param {Agent} a
 * @returns {string | undefined}
 */
export function endpointProtocol(a) {
  const p = a.meta?.endpoint_protocol;
  return typeof p === 'string' ? p : undefined;
}

/** @returns {Promise<Agent[]>} */
export async function loadAgents() {
  const { status, body } = await getJson('/v1/console/agents');
  if (status !== 200) throw new Error(`agents: HTTP ${status}`);
  return /** @type {{ agents: Agent[] }} */ (body).agents;
}

/**
 * The rooms, or undefined when the router has none (no such route) or cannot read them.
 * @param {string} [capability]
 * @returns {Promise<Room[] | undefined>}
 */
export async function loadRooms(capability) {
  const qs = capability ? `?capability=${encodeURIComponent(capability)}` : '';
  const { status, body } = await getJson(`/v1/queues${qs}`);
  return status === 200 ? /** @type {{ queues: Room[] }} */ (body).queues : undefined;
}

/**
 * The four figures per capability over `window`, or the reply that refused them (503 without
 * InfluxDB).
 * @param {string} window
 * @param {string} [capability]
 * @returns {Promise<{ groups: FigureGroup[] } | Reply>}
 */
export async function loadStats(window, capability) {
  const cap = capability ? `&capability=${encodeURIComponent(capability)}` : '';
  const reply = await getJson(`/v1/stats?window=${window}&by=capability${cap}`);
  return reply.status === 200 ? /** @type {{ groups: FigureGroup[] }} */ (reply.body) : reply;
}

/**
 * A capability's series, or the reply that refused it.
 * @param {string} capability
 * @param {string} window
 * @param {string} step
 * @returns {Promise<SeriesReply | Reply>}
 */
export async function loadSeries(capability, window, step) {
  const reply = await getJson(
    `/v1/stats/series?capability=${encodeURIComponent(capability)}&window=${window}&step=${step}`,
  );
  return reply.status === 200 ? /** @type {SeriesReply} */ (reply.body) : reply;
}

/**
 * True for a refusal rather than an answer.
 * @param {object} r
 * @returns {r is Reply}
 */
export function isRefusal(r) {
  return 'status' in r && typeof r.status === 'number';
}
