// The agents page's list: every agent the key may see, narrowed by the filters in the URL
// (status, capability, region, free text in the id). The API takes no filter: the page applies
// them to the whole list, which `GET /v1/console/agents` answers in one read.
import { card, emptyRow, filterBar, statusLine, table } from './admin-table.js';
import {
  agentHref,
  chips,
  healthText,
  leaseText,
  loadAgents,
  loadCell,
  modeChip,
  runtimeText,
  STATUSES,
  statusPill,
} from './agent-common.js';
import { errorText, fmtClock, h } from './dom.js';

/** @typedef {import('./agent-common.js').Agent} Agent */

const HEADS = [
  'Agent',
  'Status',
  'Mode',
  'Health',
  'Load',
  'Region',
  'Capabilities',
  'Tags',
  'Runtime',
  'Heartbeat',
];

/**
 * Whether `a` passes the URL's filters.
 * @param {Agent} a
 * @param {URLSearchParams} q
 */
export function passes(a, q) {
  const status = q.get('status');
  const capability = q.get('capability');
  const region = q.get('region');
  const text = q.get('q')?.toLowerCase();
  if (status && a.status !== status) return false;
  if (capability && !a.capabilities.includes(capability)) return false;
  if (region && a.region !== region) return false;
  if (text && !a.agent_id.toLowerCase().includes(text)) return false;
  return true;
}

/** @param {Agent} a */
function row(a) {
  return h('tr', { 'data-agent-id': a.agent_id, 'data-status': a.status }, [
    h('td', { class: 'mono' }, [h('a', { href: agentHref(a.agent_id) }, [a.agent_id])]),
    h('td', {}, [statusPill(a.status)]),
    h('td', {}, [modeChip(a)]),
    h('td', {}, [healthText(a)]),
    h('td', { class: 'load' }, loadCell(a)),
    h('td', {}, [a.region || h('span', { class: 'muted' }, ['–'])]),
    h('td', {}, chips(a.capabilities, 'capability')),
    h('td', {}, chips(a.tags ?? [], 'tag')),
    h('td', {}, [runtimeText(a)]),
    h('td', {}, [leaseText(a)]),
  ]);
}

/**
 * The sorted distinct values, with the URL's own even when no agent has it now.
 * @param {Iterable<string>} values
 * @param {string | null} current
 * @returns {[string, string][]}
 */
function options(values, current) {
  const set = new Set([...values].filter(Boolean));
  if (current) set.add(current);
  return [['', 'any'], ...[...set].sort().map((v) => /** @type {[string, string]} */ ([v, v]))];
}

/**
 * @param {HTMLElement} root
 * @param {import('./pages.js').PageContext} ctx
 */
export async function mountList(root, ctx) {
  const { wrap, body } = table('agents-list', HEADS);
  const status = statusLine('agents-status');
  const bar = h('div', { class: 'agents-filter-slot' });
  root.replaceChildren(card('agents-card', 'Agents', [bar, wrap, status.el], 'loading…'));
  const note = /** @type {HTMLElement} */ (root.querySelector('#agents-card-note'));

  /** @type {Agent[]} */
  let agents = [];
  const render = () => {
    const shown = agents.filter((a) => passes(a, ctx.query));
    body.replaceChildren(
      ...(shown.length > 0
        ? shown.map(row)
        : [
            emptyRow(HEADS.length, agents.length > 0 ? 'No agent matches' : 'No agents registered'),
          ]),
    );
    note.textContent = `${shown.length} of ${agents.length} shown · ${fmtClock(Date.now())}`;
  };

  const loaded = await loadAgents();
  if (!loaded.ok) {
    body.replaceChildren(emptyRow(HEADS.length, errorText(loaded), true));
    note.textContent = '';
    return;
  }
  agents = loaded.reply.agents;
  bar.replaceChildren(
    filterBar(
      'agents-filters',
      [
        { name: 'status', label: 'Status', options: options(STATUSES, ctx.query.get('status')) },
        {
          name: 'capability',
          label: 'Capability',
          options: options(
            agents.flatMap((a) => a.capabilities),
            ctx.query.get('capability'),
          ),
        },
        {
          name: 'region',
          label: 'Region',
          options: options(
            agents.map((a) => a.region),
            ctx.query.get('region'),
          ),
        },
        { name: 'q', label: 'Agent id contains', placeholder: 'any' },
      ],
      ctx,
      render,
    ),
  );
  render();
}
