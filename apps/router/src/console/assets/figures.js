// The four figures from InfluxDB (GET /v1/stats): per capability for the figures table, per
// agent for the agent table's success rate. When InfluxDB is not configured or down the stats
// endpoint answers 503 and the console falls back to the router's own recent tasks.
import { fmtMs, getJson, h } from './dom.js';

/**
 * @typedef {{ mean: number | null, p95: number | null, count: number }} Latency
 * @typedef {{ key: string, success_rate: number | null, outcomes: { completed: number, failed: number, dead: number, total: number },
 *   receipt_ms: Latency, execution_ms: Latency, completion_rate: { per_minute: number } }} FigureGroup
 * @typedef {{ window: string, groups: FigureGroup[] }} StatsReply
 */

/** The window the figures cover. */
export const FIGURES_WINDOW = '15m';

/**
 * The figures grouped by capability or agent, or undefined when the stats endpoint cannot answer.
 * @param {'capability' | 'agent'} by
 * @returns {Promise<StatsReply | undefined>}
 */
export async function loadFigures(by) {
  const { status, body } = await getJson(`/v1/stats?window=${FIGURES_WINDOW}&by=${by}`);
  return status === 200 ? /** @type {StatsReply} */ (body) : undefined;
}

/** @param {number | null} rate */
const pct = (rate) => (rate === null ? '–' : `${Math.round(rate * 100)} %`);
/** @param {Latency} l */
const lat = (l) =>
  l.mean === null ? '–' : `${fmtMs(l.mean)} / ${l.p95 === null ? '–' : fmtMs(l.p95)}`;

/**
 * A table of the four figures per capability.
 * @param {StatsReply | undefined} stats
 * @returns {HTMLElement}
 */
export function figuresTable(stats) {
  if (!stats)
    return h('p', { class: 'muted' }, [
      'Figures from InfluxDB are unavailable (not configured or not answering).',
    ]);
  // Liveness probes (capability `_probe`, PROBE_CAPABILITY in the protocol) are not work.
  const groups = stats.groups.filter((g) => g.key !== '_probe');
  if (groups.length === 0)
    return h('p', { class: 'muted' }, [`No task events in the last ${stats.window}.`]);
  const head = [
    'Capability',
    'Success',
    'Receipt mean / p95',
    'Execution mean / p95',
    'Completed / min',
    'Outcomes',
  ];
  return h('table', { class: 'figures', id: 'figures' }, [
    h('thead', {}, [
      h(
        'tr',
        {},
        head.map((t) => h('th', {}, [t])),
      ),
    ]),
    h(
      'tbody',
      {},
      groups.map((g) =>
        h('tr', { 'data-capability': g.key }, [
          h('td', {}, [h('span', { class: 'chip' }, [g.key])]),
          h('td', { class: 'num' }, [pct(g.success_rate)]),
          h('td', { class: 'num' }, [lat(g.receipt_ms)]),
          h('td', { class: 'num' }, [lat(g.execution_ms)]),
          h('td', { class: 'num' }, [g.completion_rate.per_minute.toFixed(1)]),
          h('td', { class: 'num muted' }, [
            `${g.outcomes.completed} ok · ${g.outcomes.failed} failed · ${g.outcomes.dead} dead`,
          ]),
        ]),
      ),
    ),
  ]);
}
