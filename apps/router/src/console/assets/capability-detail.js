/* global setTimeout */
// One capability's page (`/console/capabilities/<capability>`): its figures over a window chosen
// in the URL (15m, 1h, 6h, 24h), two charts over that window — outcomes per step and execution
// time — its agents, and its waiting room per tenant.
import {
  endpointProtocol,
  isRefusal,
  loadAgents,
  loadRooms,
  loadSeries,
  loadStats,
} from './capability-data.js';
import { errorText, fmtClock, fmtMs, h } from './dom.js';
import { lines, stackedBars } from './series-chart.js';

/**
 * @typedef {import('./pages.js').PageContext} PageContext
 * @typedef {import('./capability-data.js').Agent} Agent
 * @typedef {import('./capability-data.js').SeriesReply} SeriesReply
 * @typedef {import('./figures.js').FigureGroup} FigureGroup
 * @typedef {import('./rooms.js').Room} Room
 */

/** The windows offered, each with the step its charts are drawn at (60–96 steps). */
export const WINDOWS = /** @type {const} */ ([
  { window: '15m', step: '15s' },
  { window: '1h', step: '1m' },
  { window: '6h', step: '5m' },
  { window: '24h', step: '15m' },
]);
const DEFAULT_WINDOW = '1h';
const REFRESH_MS = 10_000;

const COLORS = {
  completed: '#16a34a',
  failed: '#dc2626',
  dead: '#7f1d1d',
  mean: '#0891b2',
  p95: '#2563eb',
};

/**
 * @param {string | null} asked
 */
function windowOf(asked) {
  return (
    WINDOWS.find((w) => w.window === asked) ??
    WINDOWS.find((w) => w.window === DEFAULT_WINDOW) ??
    WINDOWS[1]
  );
}

/**
 * @param {Agent} a
 */
function agentRow(a) {
  const protocol = endpointProtocol(a);
  return h('tr', { 'data-agent-id': a.agent_id, 'data-status': a.status }, [
    h('td', { class: 'mono' }, [
      h('a', { href: `/console/agents/${encodeURIComponent(a.agent_id)}` }, [a.agent_id]),
    ]),
    h('td', {}, [h('span', { class: `pill ${a.status.toLowerCase()}` }, [a.status])]),
    h('td', { class: 'num' }, [`${a.inflight} / ${a.max_concurrency}`]),
    h('td', { class: (a.health_score ?? 100) < 80 ? 'num warn' : 'num' }, [
      String(a.health_score ?? 100),
    ]),
    h('td', {}, [a.region || h('span', { class: 'muted' }, ['–'])]),
    h('td', { 'data-col': 'kind' }, [
      protocol
        ? h('span', { class: a.unreachable ? 'chip warn' : 'chip' }, [
            `endpoint · ${protocol}${a.unreachable ? ' · not answering' : ''}`,
          ])
        : h('span', { class: 'muted' }, [a.channel]),
    ]),
    h('td', {}, [a.shared ? 'shared' : a.tenant]),
  ]);
}

/**
 * @param {(string | HTMLElement)[]} head
 * @param {HTMLElement[]} rows
 * @param {string} id
 * @param {string} empty
 */
function table(head, rows, id, empty) {
  if (rows.length === 0) return h('p', { class: 'muted', id }, [empty]);
  return h('table', { class: 'figures', id }, [
    h('thead', {}, [
      h(
        'tr',
        {},
        head.map((t) => h('th', {}, [t])),
      ),
    ]),
    h('tbody', {}, rows),
  ]);
}

/**
 * @param {Room | undefined} room
 */
function roomTable(room) {
  const rows = (room?.tenants ?? []).map((t) =>
    h('tr', { 'data-tenant': t.tenant }, [
      h('td', {}, [t.tenant]),
      h('td', { class: t.queued > 0 ? 'num warn' : 'num', 'data-col': 'queued' }, [
        String(t.queued),
      ]),
      h('td', { class: 'num', 'data-col': 'oldest' }, [
        t.queued > 0 ? fmtMs(t.oldest_wait_ms) : '–',
      ]),
      h('td', { class: 'num' }, [
        t.sent > 0 ? `${fmtMs(t.wait_p50_ms)} / ${fmtMs(t.wait_p99_ms)}` : '–',
      ]),
      h('td', { class: 'num' }, [`${Math.round(t.share * 100)} %`]),
      h('td', { class: 'num' }, [`${t.arrived} / ${t.sent}`]),
    ]),
  );
  return table(
    ['Tenant', 'Waiting', 'Oldest wait', 'Wait p50 / p99', 'Share', 'In / sent'],
    rows,
    'cap-room',
    'No task has waited for a slot: every one found an agent.',
  );
}

/**
 * The figures over the window, and the room now.
 * @param {Agent[]} agents
 * @param {Room | undefined} room
 * @param {FigureGroup | undefined} f
 * @param {string} window
 * @param {boolean} figuresOn
 */
function facts(agents, room, f, window, figuresOn) {
  const healthy = agents.filter((a) => a.status === 'HEALTHY').length;
  const endpoints = agents.filter((a) => endpointProtocol(a) !== undefined).length;
  const none = figuresOn ? '0' : '–';
  /** @type {[string, string, string][]} */
  const items = [
    ['agents', 'Agents (HEALTHY / all)', `${healthy} / ${agents.length}`],
    ['endpoints', 'Endpoint agents', String(endpoints)],
    ['queued', 'Waiting now', String(room?.queued ?? 0)],
    ['oldest', 'Oldest wait', room && room.queued > 0 ? fmtMs(room.oldest_wait_ms) : '–'],
    ['completed', `Completed, ${window}`, f ? String(f.outcomes.completed) : none],
    ['failed', `Failed / dead, ${window}`, f ? `${f.outcomes.failed} / ${f.outcomes.dead}` : none],
    [
      'success',
      'Success rate',
      f?.success_rate !== null && f?.success_rate !== undefined
        ? `${Math.round(f.success_rate * 100)} %`
        : '–',
    ],
    [
      'execution',
      'Execution mean / p95',
      f && f.execution_ms.mean !== null
        ? `${fmtMs(f.execution_ms.mean)} / ${fmtMs(f.execution_ms.p95 ?? NaN)}`
        : '–',
    ],
    [
      'receipt',
      'Receipt mean / p95',
      f && f.receipt_ms.mean !== null
        ? `${fmtMs(f.receipt_ms.mean)} / ${fmtMs(f.receipt_ms.p95 ?? NaN)}`
        : '–',
    ],
  ];
  return h(
    'div',
    { class: 'cap-facts', id: 'cap-facts' },
    items.map(([key, label, value]) =>
      h('div', { class: 'cap-fact', 'data-fact': key }, [
        h('span', { class: 'muted' }, [label]),
        h('b', {}, [value]),
      ]),
    ),
  );
}

/**
 * @param {SeriesReply} series
 * @param {string} window
 */
function charts(series, window) {
  const times = series.points.map((p) => p.at);
  const stepMs = series.step_ms;
  const per = `per ${series.step}`;
  const throughput = stackedBars({
    times,
    stepMs,
    unit: 'count',
    label: `completed and failed tasks ${per}, last ${window}`,
    empty: `No task completed or failed in the last ${window}`,
    series: [
      {
        key: 'completed',
        label: 'completed',
        color: COLORS.completed,
        values: series.points.map((p) => p.completed),
      },
      {
        key: 'failed',
        label: 'failed attempts',
        color: COLORS.failed,
        values: series.points.map((p) => p.failed),
      },
      { key: 'dead', label: 'dead', color: COLORS.dead, values: series.points.map((p) => p.dead) },
    ],
  });
  const latency = lines({
    times,
    stepMs,
    unit: 'ms',
    label: `execution time ${per}, last ${window}`,
    empty: `No task completed in the last ${window}`,
    series: [
      {
        key: 'p95',
        label: 'p95',
        color: COLORS.p95,
        values: series.points.map((p) => p.execution_p95_ms),
      },
      {
        key: 'mean',
        label: 'mean',
        color: COLORS.mean,
        values: series.points.map((p) => p.execution_mean_ms),
      },
    ],
  });
  return { throughput, latency };
}

/**
 * @param {HTMLElement} root
 * @param {PageContext} ctx
 * @param {string} capability
 */
export function mountDetail(root, ctx, capability) {
  let chosen = windowOf(ctx.query.get('window'));
  const buttons = WINDOWS.map((w) =>
    h('button', { type: 'button', 'data-window': w.window, class: 'window-button' }, [w.window]),
  );
  const mark = () => {
    for (const b of buttons)
      b.setAttribute('aria-pressed', String(b.dataset.window === chosen.window));
  };
  mark();
  const note = h('span', { class: 'muted', id: 'cap-detail-note' }, ['Loading…']);
  const factsWrap = h('div', {}, [h('p', { class: 'muted' }, ['Loading…'])]);
  const throughputWrap = h('div', { class: 'chart', id: 'chart-throughput' });
  const latencyWrap = h('div', { class: 'chart', id: 'chart-latency' });
  const throughputTitle = h('h2', {}, ['Throughput']);
  const latencyTitle = h('h2', {}, ['Execution time']);
  const agentsWrap = h('div', { class: 'table-wrap' }, [h('p', { class: 'muted' }, ['Loading…'])]);
  const roomWrap = h('div', { class: 'table-wrap' }, [h('p', { class: 'muted' }, ['Loading…'])]);
  root.replaceChildren(
    h('section', { class: 'card wide' }, [
      h('div', { class: 'card-head' }, [
        h('h2', {}, [
          h('a', { href: '/console/capabilities', class: 'muted' }, ['Capabilities']),
          ' / ',
          h('span', { id: 'cap-name' }, [capability]),
        ]),
        h('div', { class: 'window-select', role: 'group', 'aria-label': 'Window' }, buttons),
      ]),
      factsWrap,
      note,
    ]),
    h('section', { class: 'card' }, [
      h('div', { class: 'card-head' }, [
        throughputTitle,
        h('span', { class: 'muted' }, ['tasks per step']),
      ]),
      throughputWrap,
    ]),
    h('section', { class: 'card' }, [
      h('div', { class: 'card-head' }, [
        latencyTitle,
        h('span', { class: 'muted' }, ['received → completed, per step']),
      ]),
      latencyWrap,
    ]),
    h('section', { class: 'card wide' }, [
      h('div', { class: 'card-head' }, [
        h('h2', {}, ['Agents']),
        h('span', { class: 'muted' }, ['serving it, as the registry has them now']),
      ]),
      agentsWrap,
    ]),
    h('section', { class: 'card wide' }, [
      h('div', { class: 'card-head' }, [
        h('h2', {}, ['Waiting room']),
        h('span', { class: 'muted' }, ['tasks waiting for a free slot, per tenant, now']),
      ]),
      roomWrap,
    ]),
  );

  /** The window the drawn charts are of: a reply to an older choice is dropped. */
  let loads = 0;
  const refresh = async () => {
    const load = ++loads;
    const { window, step } = chosen;
    const [agents, rooms, stats, series] = await Promise.all([
      loadAgents(),
      loadRooms(capability),
      loadStats(window, capability),
      loadSeries(capability, window, step),
    ]);
    if (load !== loads) return;
    const mine = agents.filter((a) => a.capabilities.includes(capability));
    const room = rooms?.find((q) => q.capability === capability);
    const figuresOn = !isRefusal(stats);
    const group = isRefusal(stats) ? undefined : stats.groups.find((g) => g.key === capability);
    factsWrap.replaceChildren(facts(mine, room, group, window, figuresOn));
    agentsWrap.replaceChildren(
      table(
        ['Agent', 'Status', 'Inflight / max', 'Health', 'Region', 'Kind', 'Tenant'],
        mine.map(agentRow),
        'cap-agents',
        'No agent serves it now.',
      ),
    );
    roomWrap.replaceChildren(
      rooms === undefined
        ? h('p', { class: 'muted' }, ['The waiting rooms are unavailable.'])
        : roomTable(room),
    );
    if (isRefusal(series)) {
      const why = h('p', { class: 'muted' }, [`Charts unavailable: ${errorText(series)}`]);
      throughputWrap.replaceChildren(why);
      latencyWrap.replaceChildren(why.cloneNode(true));
      throughputWrap.dataset.window = window;
    } else {
      const drawn = charts(series, window);
      throughputWrap.replaceChildren(drawn.throughput);
      latencyWrap.replaceChildren(drawn.latency);
      throughputTitle.textContent = `Throughput, last ${window}`;
      latencyTitle.textContent = `Execution time, last ${window}`;
      for (const wrap of [throughputWrap, latencyWrap]) {
        wrap.dataset.window = window;
        wrap.dataset.step = series.step;
        wrap.dataset.points = String(series.points.length);
      }
    }
    note.textContent = `${ctx.operator ? 'every tenant' : `tenant ${ctx.session.tenant}`} · updated ${fmtClock(Date.now())}`;
  };

  const show = () =>
    refresh().catch((/** @type {unknown} */ err) => {
      note.textContent = err instanceof Error ? err.message : 'request failed';
    });

  for (const b of buttons) {
    b.addEventListener('click', () => {
      chosen = windowOf(b.dataset.window ?? null);
      ctx.setQuery({ window: chosen.window });
      mark();
      void show();
    });
  }

  const tick = () => void show().finally(() => setTimeout(tick, REFRESH_MS));
  tick();
}
