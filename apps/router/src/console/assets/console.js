/* global history, location, setTimeout */
// The operators' console: live agents, live fleet events (server-sent events), task lookup with
// its timeline, and stage latencies of recent tasks. Plain ES modules, served by the router.
import { latencyChart, timelineChart } from './charts.js';
import { byId, fmtClock, fmtMs, getJson, h } from './dom.js';
import { FIGURES_WINDOW, figuresTable, loadFigures } from './figures.js';
import { loadRooms, roomsTable } from './rooms.js';
import { startSession } from './login.js';
import { showPage } from './pages.js';
import { runtimeText } from './agent-common.js';

/**
 * @typedef {import('./charts.js').TimelineEntry} TimelineEntry
 * @typedef {import('./charts.js').LatencyPoint} LatencyPoint
 * @typedef {{ agent_id: string, status: string, inflight: number, max_concurrency: number, lease_age_ms: number,
 *   region: string, capabilities: string[], health_score: number, dependency_down?: string,
 *   runtime?: { loop_lag_p99_ms: number, gc_share?: number, rss_bytes: number },
 *   health_check?: { ok: boolean, at: number, dependencies: Record<string, { ok: boolean, latency_ms?: number, detail?: string }> },
 *   recent: { completed: number, failed: number, failures_by_code: Record<string, number>, success_rate: number | null } }} Agent
 * @typedef {{ agents: Agent[], total: number, sampled_tasks: number }} AgentsReply
 * @typedef {{ id: string, kind: string, at: number, agent_id?: string, task_id?: string, capability?: string,
 *   from?: string, to?: string, reason?: string, attempt?: number, epoch?: number }} FleetEvent
 * @typedef {{ task_id: string, status: string, capability: string, agent_id: string, attempts: number,
 *   trace_id?: string, error?: string, dead_reason?: string, timeline: TimelineEntry[] }} TaskView
 * @typedef {{ task_id: string, source: string, stages: { stage: string, at: number, agent_id: string | null,
 *   attempt: number | null, reason?: string }[] }} TimelineReply
 * @typedef {{ rate: number | null, finished: number, source: string }} Success
 */

const AGENTS_EVERY_MS = 2000;
const LATENCY_EVERY_MS = 5000;
const FIGURES_EVERY_MS = 10_000;
const ROOMS_EVERY_MS = 2000;
const MAX_EVENTS = 200;

const conn = byId('conn', HTMLDivElement);
const setConn = (/** @type {string} */ state, /** @type {string} */ text) => {
  conn.dataset.state = state;
  const label = conn.querySelector('span');
  if (label) label.textContent = text;
};

// ---- agents -------------------------------------------------------------------------------

const agentsBody = /** @type {HTMLTableSectionElement} */ (
  byId('agents', HTMLTableElement).tBodies[0]
);

/**
 * Success rates per agent from InfluxDB over the figures' window (every router's tasks), when
 * the stats endpoint answers; otherwise each row uses this router's recent tasks.
 * @type {Map<string, Success> | undefined}
 */
let fleetSuccess;

/** @param {Agent} a @returns {Success} */
function successOf(a) {
  const fleet = fleetSuccess?.get(a.agent_id);
  if (fleet) return fleet;
  return {
    rate: a.recent.success_rate,
    finished: a.recent.completed + a.recent.failed,
    source: 'tasks this router sent recently',
  };
}

/** @param {Agent} a */
function agentRow(a) {
  const load = a.max_concurrency > 0 ? a.inflight / a.max_concurrency : 0;
  const { rate, finished, source } = successOf(a);
  const meter = h('span', { class: 'meter' }, [h('b')]);
  /** @type {HTMLElement} */ (meter.firstChild).style.width =
    `${Math.min(100, Math.round(load * 100))}%`;
  return h('tr', { 'data-agent-id': a.agent_id, 'data-status': a.status }, [
    h('td', { class: 'mono' }, [
      h('a', { href: `/console/agents/${encodeURIComponent(a.agent_id)}` }, [a.agent_id]),
    ]),
    h('td', {}, [h('span', { class: `pill ${a.status.toLowerCase()}` }, [a.status])]),
    h(
      'td',
      {
        class: (a.health_score ?? 100) < 80 ? 'num warn' : 'num',
        title:
          'From its recent outcomes: failures, timeouts, lapsed leases, failed probes, slow completions',
      },
      [String(a.health_score ?? 100)],
    ),
    h('td', {}, [meter, h('span', { class: 'num' }, [`${a.inflight} / ${a.max_concurrency}`])]),
    h('td', { class: a.lease_age_ms > 15_000 ? 'num warn' : 'num' }, [
      `${fmtMs(a.lease_age_ms)} ago`,
    ]),
    h('td', {}, [a.region || h('span', { class: 'muted' }, ['–'])]),
    h(
      'td',
      {},
      a.capabilities.map((c) => h('span', { class: 'chip' }, [c])),
    ),
    h('td', { class: 'num', title: source }, [
      rate === null
        ? h('span', { class: 'muted' }, ['no results yet'])
        : `${Math.round(rate * 100)} %`,
      finished > 0 ? h('span', { class: 'muted' }, [` of ${finished}`]) : undefined,
    ]),
    h('td', { class: 'mono' }, failureCodes(a.recent.failures_by_code ?? {})),
    h('td', { class: 'mono' }, dependencyChips(a)),
    runtimeCell(a),
  ]);
}

/**
 * The runtime figures of the agent's last heartbeat, in their cell (agent-common.js).
 * @param {Agent} a
 */
function runtimeCell(a) {
  return h('td', {}, [runtimeText(a)]);
}

/**
 * The dependencies the agent's last probe reported, those down first (warned); the one flagged
 * down fleet-wide is named so.
 * @param {Agent} a
 */
function dependencyChips(a) {
  const deps = Object.entries(a.health_check?.dependencies ?? {}).sort(
    (x, y) => Number(x[1].ok) - Number(y[1].ok) || (x[0] < y[0] ? -1 : 1),
  );
  if (deps.length === 0) return [h('span', { class: 'muted' }, ['–'])];
  return deps.map(([name, d]) =>
    h(
      'span',
      {
        class: d.ok ? 'chip' : 'chip warn',
        'data-dependency': name,
        title: [
          d.detail ?? '',
          a.dependency_down === name ? 'down fleet-wide: the agent gets no task' : '',
        ]
          .filter(Boolean)
          .join(' · '),
      },
      [`${name} ${d.ok ? 'ok' : 'down'}${d.latency_ms !== undefined ? ` ${d.latency_ms} ms` : ''}`],
    ),
  );
}

/**
 * Recent failures grouped by error_code, most frequent first.
 * @param {Record<string, number>} byCode
 */
function failureCodes(byCode) {
  const codes = Object.entries(byCode).sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
  if (codes.length === 0) return [h('span', { class: 'muted' }, ['–'])];
  return codes.map(([code, n]) => h('span', { class: 'chip' }, [`${code} ×${n}`]));
}

async function refreshAgents() {
  const { status, body } = await getJson('/v1/console/agents');
  if (status !== 200) throw new Error(`agents: HTTP ${status}`);
  const reply = /** @type {AgentsReply} */ (body);
  const rows = reply.agents.map(agentRow);
  if (rows.length === 0)
    rows.push(h('tr', { class: 'empty' }, [h('td', { colspan: 11 }, ['No agents registered'])]));
  agentsBody.replaceChildren(...rows);
  /** @type {Record<string, number>} */
  const counts = {};
  for (const a of reply.agents) counts[a.status] = (counts[a.status] ?? 0) + 1;
  byId('summary', HTMLDivElement).replaceChildren(
    ...Object.entries(counts).map(([st, n]) =>
      h('span', { class: `pill ${st.toLowerCase()}` }, [`${n} ${st}`]),
    ),
  );
  byId('agents-note', HTMLSpanElement).textContent =
    `${reply.total > reply.agents.length ? `${reply.agents.length} of ${reply.total} · ` : ''}success rates from ${reply.sampled_tasks} recent tasks · ${fmtClock(Date.now())}`;
}

// ---- live events --------------------------------------------------------------------------

const eventsList = byId('events', HTMLOListElement);
let eventCount = 0;

/** @param {FleetEvent} e */
function describe(e) {
  const who = e.agent_id ?? '';
  switch (e.kind) {
    case 'registered':
      return `${who} registered${e.epoch ? ` (epoch ${e.epoch})` : ''}`;
    case 'fenced':
      return `${who} re-registered; epoch ${e.epoch ?? '?'} fences the older instance`;
    case 'deregistered':
      return `${who} is draining`;
    case 'status':
      return `${who} ${e.from ?? '?'} → ${e.to ?? '?'}${e.reason ? ` (${e.reason})` : ''}`;
    case 'retried':
      return `task ${e.task_id ?? ''} retried${e.attempt ? `, attempt ${e.attempt}` : ''}${e.reason ? `: ${e.reason}` : ''}`;
    case 'dead':
      return `task ${e.task_id ?? ''} dead-lettered${e.reason ? `: ${e.reason}` : ''}`;
    case 'replayed':
      return `task ${e.task_id ?? ''} replayed from the dead-letter queue`;
    case 'ejected':
      return `${who} ejected${e.reason ? `: ${e.reason}` : ''}`;
    default:
      return [who, e.task_id, e.reason].filter(Boolean).join(' ');
  }
}

/** @param {FleetEvent} e */
function addEvent(e) {
  const tone = e.kind === 'status' ? (e.to ?? '').toLowerCase() : e.kind;
  const text = h('span', { class: 'text' }, [describe(e)]);
  if (e.task_id) {
    const taskId = e.task_id;
    text.classList.add('link');
    text.addEventListener('click', () => void lookUp(taskId));
  }
  const li = h('li', { 'data-kind': e.kind, 'data-agent-id': e.agent_id, 'data-id': e.id }, [
    h('time', {}, [fmtClock(e.at)]),
    h('span', { class: `kind ${tone}` }, [e.kind]),
    text,
  ]);
  eventsList.prepend(li);
  while (eventsList.children.length > MAX_EVENTS) eventsList.lastElementChild?.remove();
  eventCount++;
  byId('events-count', HTMLSpanElement).textContent = `${eventCount} received`;
}

function connectEvents() {
  // EventSource reconnects by itself and sends Last-Event-ID, so nothing is missed.
  const source = new EventSource('/v1/console/events?backlog=50');
  source.onopen = () => setConn('live', 'live');
  source.onerror = () => setConn('down', 'reconnecting…');
  source.onmessage = (msg) => {
    try {
      /** @type {unknown} */
      const data = JSON.parse(String(msg.data));
      addEvent(/** @type {FleetEvent} */ (data));
    } catch {
      // An unreadable event is skipped; the stream goes on.
    }
  };
}

// ---- task lookup --------------------------------------------------------------------------

const taskForm = byId('task-form', HTMLFormElement);
const taskInput = byId('task-id', HTMLInputElement);
const taskResult = byId('task-result', HTMLDivElement);

/** @param {string} taskId */
async function lookUp(taskId) {
  taskInput.value = taskId;
  history.replaceState(null, '', `#task=${encodeURIComponent(taskId)}`);
  taskResult.replaceChildren(h('p', { class: 'muted' }, ['Looking up…']));
  const { status, body } = await getJson(`/v1/tasks/${encodeURIComponent(taskId)}`);
  if (status === 404 && (await lookUpExpired(taskId))) return;
  if (status !== 200) {
    const err = /** @type {{ error?: string, message?: string }} */ (body);
    taskResult.replaceChildren(
      h('p', { class: 'error' }, [`${err.error ?? `HTTP ${status}`}: ${err.message ?? ''}`]),
    );
    return;
  }
  const task = /** @type {TaskView} */ (body);
  const facts = [
    ['status', h('span', { class: `pill ${task.status}` }, [task.status])],
    ['capability', task.capability],
    ['agent', task.agent_id || '–'],
    ['attempts', String(task.attempts)],
    ['trace id', task.trace_id ?? '–'],
  ];
  if (task.error) facts.push(['error', task.error]);
  if (task.dead_reason) facts.push(['dead because', task.dead_reason]);
  const total =
    task.timeline.length > 1 ? (task.timeline.at(-1)?.at ?? 0) - (task.timeline[0]?.at ?? 0) : 0;
  taskResult.replaceChildren(
    h(
      'dl',
      { class: 'facts', 'data-task-id': task.task_id },
      facts.flatMap(([k, v]) => [h('dt', {}, [k ?? '']), h('dd', {}, [v ?? ''])]),
    ),
    h(
      'div',
      {
        class: 'chart',
        id: 'task-timeline',
        'data-stages': task.timeline.map((e) => e.stage).join(' '),
      },
      [timelineChart(task.timeline)],
    ),
    h('p', { class: 'muted' }, [
      `${task.timeline.length} stages over ${fmtMs(total)} · `,
      h('a', { href: `/console/tasks/${encodeURIComponent(task.task_id)}`, id: 'task-page' }, [
        'open the task page',
      ]),
    ]),
  );
}

/**
 * A task whose state expired from Redis: its stages from InfluxDB, when they are there.
 * @param {string} taskId
 * @returns {Promise<boolean>} whether it was found
 */
async function lookUpExpired(taskId) {
  const { status, body } = await getJson(`/v1/tasks/${encodeURIComponent(taskId)}/timeline`);
  if (status !== 200) return false;
  const { stages } = /** @type {TimelineReply} */ (body);
  if (stages.length === 0) return false;
  /** @type {TimelineEntry[]} */
  const timeline = stages.map((st) => ({
    stage: st.stage,
    at: st.at,
    agent_id: st.agent_id ?? undefined,
    attempt: st.attempt ?? undefined,
  }));
  const last = stages.at(-1);
  taskResult.replaceChildren(
    h('dl', { class: 'facts', 'data-task-id': taskId }, [
      h('dt', {}, ['last stage']),
      h('dd', {}, [h('span', { class: `pill ${last?.stage ?? ''}` }, [last?.stage ?? ''])]),
    ]),
    h(
      'div',
      {
        class: 'chart',
        id: 'task-timeline',
        'data-stages': timeline.map((e) => e.stage).join(' '),
      },
      [timelineChart(timeline)],
    ),
    h('p', { class: 'muted' }, ['Task state expired from Redis: stages from InfluxDB.']),
  );
  return true;
}

taskForm.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const id = taskInput.value.trim();
  if (id) void lookUp(id);
});

// ---- latency ------------------------------------------------------------------------------

async function refreshLatency() {
  const { status, body } = await getJson('/v1/console/latency?limit=200');
  if (status !== 200) throw new Error(`latency: HTTP ${status}`);
  const { points, now } = /** @type {{ points: LatencyPoint[], now: number }} */ (body);
  byId('latency', HTMLDivElement).replaceChildren(
    latencyChart(points, now, (id) => void lookUp(id)),
  );
}

async function refreshFigures() {
  const [byCapability, byAgent] = await Promise.all([
    loadFigures('capability'),
    loadFigures('agent'),
  ]);
  byId('figures-wrap', HTMLDivElement).replaceChildren(figuresTable(byCapability));
  fleetSuccess = byAgent
    ? new Map(
        byAgent.groups.map((g) => [
          g.key,
          {
            rate: g.success_rate,
            finished: g.outcomes.total,
            source: `all tasks, last ${FIGURES_WINDOW} (InfluxDB)`,
          },
        ]),
      )
    : undefined;
}

async function refreshRooms() {
  byId('rooms-wrap', HTMLDivElement).replaceChildren(roomsTable(await loadRooms()));
}

// ---- start --------------------------------------------------------------------------------

/**
 * Runs `fn` now and then every `ms`, never two at once; a failure is shown, not thrown.
 * @param {() => Promise<void>} fn
 * @param {number} ms
 */
function every(fn, ms) {
  const tick = () =>
    fn()
      .catch((/** @type {unknown} */ err) =>
        setConn('down', err instanceof Error ? err.message : 'request failed'),
      )
      .finally(() => setTimeout(tick, ms));
  void tick();
}

// Nothing is read until the console has a session: the login form shows otherwise. A path
// that names a page (`/console/tasks`) shows that page instead of the overview.
const session = await startSession();
if (session && (await showPage(session))) {
  setConn('live', 'connected');
} else if (session) {
  every(refreshAgents, AGENTS_EVERY_MS);
  every(refreshLatency, LATENCY_EVERY_MS);
  every(refreshFigures, FIGURES_EVERY_MS);
  every(refreshRooms, ROOMS_EVERY_MS);
  connectEvents();
  const fromHash = /^#task=(.+)$/.exec(location.hash)?.[1];
  if (fromHash) void lookUp(decodeURIComponent(fromHash));
} else {
  setConn('down', 'logged out');
}
