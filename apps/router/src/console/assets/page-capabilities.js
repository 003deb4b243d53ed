/* global setTimeout */
// The console's capabilities page: one row per capability — its agents, its waiting room, its
// last 15 minutes' throughput and execution time, and a sparkline — filtered by text and by
// "waiting tasks only" in the URL; `/console/capabilities/<capability>` is its detail page
// (capability-detail.js).
import {
  PROBE_CAPABILITY,
  endpointProtocol,
  isRefusal,
  loadAgents,
  loadRooms,
  loadSeries,
  loadStats,
} from './capability-data.js';
import { mountDetail } from './capability-detail.js';
import { errorText, fmtClock, fmtMs, h } from './dom.js';
import { sparkline } from './series-chart.js';

/**
 * @typedef {import('./pages.js').PageContext} PageContext
 * @typedef {import('./capability-data.js').Agent} Agent
 * @typedef {import('./figures.js').FigureGroup} FigureGroup
 * @typedef {{ capability: string, agents: number, healthy: number, endpoints: number, queued: number,
 *   oldestWaitMs: number, figures: FigureGroup | undefined }} CapabilityRow
 */

const REFRESH_MS = 5000;
/** The sparklines are read again at most this often (one request per capability). */
const SPARK_EVERY_MS = 15_000;
/** The window of the figures and sparklines. */
const LIST_WINDOW = '15m';
const SPARK_STEP = '1m';
/** Sparklines are drawn for the first rows only: one request each. */
const MAX_SPARKS = 60;

/**
 * @param {HTMLElement} root
 * @param {PageContext} ctx
 */
export function mount(root, ctx) {
  if (ctx.item !== undefined) return mountDetail(root, ctx, ctx.item);
  return mountList(root, ctx);
}

/**
 * @param {string} capability
 */
const capabilityHref = (capability) => `/console/capabilities/${encodeURIComponent(capability)}`;

/**
 * The rows: every capability an agent serves, a room holds or the figures name.
 * @param {Agent[]} agents
 * @param {import('./rooms.js').Room[]} rooms
 * @param {FigureGroup[]} groups
 * @returns {CapabilityRow[]}
 */
function capabilityRows(agents, rooms, groups) {
  /** @type {Map<string, CapabilityRow>} */
  const rows = new Map();
  const row = (/** @type {string} */ capability) => {
    let r = rows.get(capability);
    if (!r) {
      r = {
        capability,
        agents: 0,
        healthy: 0,
        endpoints: 0,
        queued: 0,
        oldestWaitMs: 0,
        figures: undefined,
      };
      rows.set(capability, r);
    }
    return r;
  };
  for (const a of agents) {
    for (const c of a.capabilities) {
      const r = row(c);
      r.agents++;
      if (a.status === 'HEALTHY') r.healthy++;
      if (endpointProtocol(a) !== undefined) r.endpoints++;
    }
  }
  for (const q of rooms) {
    if (q.queued === 0 && q.tenants.length === 0 && !rows.has(q.capability)) continue;
    const r = row(q.capability);
    r.queued = q.queued;
    r.oldestWaitMs = q.oldest_wait_ms;
  }
  for (const g of groups) row(g.key).figures = g;
  rows.delete(PROBE_CAPABILITY);
  return [...rows.values()].sort((a, b) => (a.capability < b.capability ? -1 : 1));
}

/**
 * @param {CapabilityRow} r
 * @param {Map<string, number[]>} sparks
 * @param {boolean} figuresOn
 */
function rowOf(r, sparks, figuresOn) {
  const f = r.figures;
  const spark = sparks.get(r.capability);
  const dash = () => h('span', { class: 'muted' }, ['–']);
  return h('tr', { 'data-capability': r.capability, 'data-queued': r.queued }, [
    h('td', {}, [h('a', { href: capabilityHref(r.capability), class: 'chip' }, [r.capability])]),
    h(
      'td',
      {
        class: r.agents > 0 && r.healthy === 0 ? 'num warn' : 'num',
        'data-col': 'agents',
        title: 'HEALTHY / all agents serving it',
      },
      [r.agents === 0 ? 'none' : `${r.healthy} / ${r.agents}`],
    ),
    h('td', { class: 'num', 'data-col': 'endpoints', title: 'Endpoint agents a relay calls' }, [
      r.endpoints > 0 ? String(r.endpoints) : dash(),
    ]),
    h('td', { class: r.queued > 0 ? 'num warn' : 'num', 'data-col': 'queued' }, [String(r.queued)]),
    h('td', { class: 'num', 'data-col': 'oldest' }, [
      r.queued > 0 ? fmtMs(r.oldestWaitMs) : dash(),
    ]),
    h('td', { class: 'num', 'data-col': 'throughput' }, [
      f ? f.completion_rate.per_minute.toFixed(1) : dash(),
    ]),
    h('td', { class: f && f.outcomes.failed > 0 ? 'num warn' : 'num', 'data-col': 'failed' }, [
      f ? String(f.outcomes.failed) : dash(),
      f && f.outcomes.dead > 0
        ? h('span', { class: 'muted' }, [` (${f.outcomes.dead} dead)`])
        : undefined,
    ]),
    h('td', { class: 'num', 'data-col': 'p95' }, [
      f && f.execution_ms.p95 !== null ? fmtMs(f.execution_ms.p95) : dash(),
    ]),
    h('td', { 'data-col': 'trend' }, [
      spark
        ? sparkline(spark, `completed per minute, last ${LIST_WINDOW}: ${spark.join(', ')}`)
        : figuresOn
          ? dash()
          : undefined,
    ]),
  ]);
}

/**
 * @param {HTMLElement} root
 * @param {PageContext} ctx
 */
function mountList(root, ctx) {
  const text = h('input', {
    id: 'cap-filter',
    type: 'search',
    placeholder: 'filter by name',
    spellcheck: 'false',
    'aria-label': 'Filter capabilities by name',
    value: ctx.query.get('q') ?? '',
  });
  const waiting = h('input', { id: 'cap-waiting', type: 'checkbox' });
  waiting.checked = ctx.query.get('waiting') === '1';
  const note = h('span', { class: 'muted', id: 'cap-note' }, ['Loading…']);
  const tbody = h('tbody', {}, [
    h('tr', { class: 'empty' }, [h('td', { colspan: 9 }, ['Loading capabilities…'])]),
  ]);
  const head = [
    ['Capability', ''],
    ['Agents', 'HEALTHY / all'],
    ['Endpoints', 'endpoint agents a relay calls'],
    ['Waiting', 'tasks waiting for a free slot now'],
    ['Oldest wait', ''],
    ['Done / min', `completed per minute, last ${LIST_WINDOW}`],
    ['Failed', `failed attempts (and dead letters), last ${LIST_WINDOW}`],
    ['Exec p95', `execution time (received → completed) p95, last ${LIST_WINDOW}`],
    ['Last 15 min', 'completed per minute'],
  ];
  root.replaceChildren(
    h('section', { class: 'card wide' }, [
      h('div', { class: 'card-head' }, [h('h2', {}, ['Capabilities']), note]),
      h('div', { class: 'cap-filters' }, [
        text,
        h('label', { class: 'chip' }, [waiting, ' with waiting tasks only']),
      ]),
      h('div', { class: 'table-wrap' }, [
        h('table', { id: 'capabilities', class: 'figures' }, [
          h('thead', {}, [
            h(
              'tr',
              {},
              head.map(([t, title]) => h('th', { title: title || undefined }, [t ?? ''])),
            ),
          ]),
          tbody,
        ]),
      ]),
    ]),
  );

  /** @type {CapabilityRow[]} */
  let rows = [];
  /** @type {Map<string, number[]>} */
  const sparks = new Map();
  let sparksAt = 0;
  let figuresOn = false;
  /** @type {string} */
  let problem = '';

  const visible = () => {
    const q = text.value.trim().toLowerCase();
    return rows.filter(
      (r) => (!q || r.capability.toLowerCase().includes(q)) && (!waiting.checked || r.queued > 0),
    );
  };

  const render = () => {
    const shown = visible();
    const trs = shown.map((r) => rowOf(r, sparks, figuresOn));
    if (trs.length === 0) {
      const why =
        rows.length === 0 ? 'No capability: no agent, waiting task or recent task.' : 'No match.';
      trs.push(h('tr', { class: 'empty' }, [h('td', { colspan: 9 }, [why])]));
    }
    tbody.replaceChildren(...trs);
    note.textContent = [
      `${shown.length} of ${rows.length} capabilities`,
      problem,
      `figures: last ${LIST_WINDOW}`,
      fmtClock(Date.now()),
    ]
      .filter(Boolean)
      .join(' · ');
  };

  const refreshSparks = async () => {
    const caps = visible()
      .slice(0, MAX_SPARKS)
      .map((r) => r.capability);
    const replies = await Promise.all(caps.map((c) => loadSeries(c, LIST_WINDOW, SPARK_STEP)));
    replies.forEach((reply, i) => {
      if (!isRefusal(reply))
        sparks.set(
          /** @type {string} */ (caps[i]),
          reply.points.map((p) => p.completed),
        );
    });
    sparksAt = Date.now();
  };

  const refresh = async () => {
    const [agents, rooms, stats] = await Promise.all([
      loadAgents(),
      loadRooms(),
      loadStats(LIST_WINDOW),
    ]);
    figuresOn = !isRefusal(stats);
    problem = isRefusal(stats) ? `figures unavailable (${errorText(stats)})` : '';
    rows = capabilityRows(agents, rooms ?? [], isRefusal(stats) ? [] : stats.groups);
    render();
    if (figuresOn && Date.now() - sparksAt >= SPARK_EVERY_MS) {
      await refreshSparks();
      render();
    }
  };

  text.addEventListener('input', () => {
    ctx.setQuery({ q: text.value.trim() || undefined });
    render();
    sparksAt = 0;
  });
  waiting.addEventListener('change', () => {
    ctx.setQuery({ waiting: waiting.checked ? '1' : undefined });
    render();
  });

  const tick = () =>
    refresh()
      .catch((/** @type {unknown} */ err) => {
        problem = err instanceof Error ? err.message : 'request failed';
        render();
      })
      .finally(() => setTimeout(tick, REFRESH_MS));
  void tick();
}
