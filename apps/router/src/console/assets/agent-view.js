/* global EventSource */
// One agent: its state, runtime, last probe and its dependencies, its recent failures by
// error_code, and its health history (status changes among the fleet events). An operator may
// drain it (`POST /v1/agents/:id/drain`) or, while it observes, promote it to serving
// (`POST /v1/agents/:id/serve`, with an optional weight); the router sends both on to
// registry-sync, and the page shows what registry-sync answered.
import { button, card, confirmButton, statusLine, timeEl } from './admin-table.js';
import {
  chips,
  healthText,
  leaseText,
  loadAgents,
  loadCell,
  modeChip,
  runtimeText,
  statusPill,
} from './agent-common.js';
import { errorText, fmtClock, fmtMs, h, sendJson } from './dom.js';

/**
 * @typedef {import('./agent-common.js').Agent} Agent
 * @typedef {{ id: string, kind: string, at: number, agent_id?: string, from?: string, to?: string,
 *   reason?: string, epoch?: number, dependency?: string, state?: string, agents?: string[] }} FleetEvent
 */

/** Fleet events read back when the view opens (the most the stream sends). */
const BACKLOG = 500;
/** History rows kept on the page. */
const MAX_HISTORY = 200;

/**
 * A definition list of facts; `undefined` values are left out.
 * @param {[string, Node | string | undefined][]} rows
 * @param {string} id
 */
function facts(rows, id) {
  return h(
    'dl',
    { class: 'facts', id },
    rows.flatMap(([k, v]) => (v === undefined ? [] : [h('dt', {}, [k]), h('dd', {}, [v])])),
  );
}

/**
 * What a fleet event says about the agent, or undefined when it is not about it.
 * @param {FleetEvent} e
 * @param {string} agentId
 */
function historyText(e, agentId) {
  const mine = e.agent_id === agentId || (e.agents ?? []).includes(agentId);
  if (!mine) return undefined;
  const why = e.reason ? ` (${e.reason})` : '';
  switch (e.kind) {
    case 'registered':
      return `registered${e.epoch !== undefined ? `, epoch ${e.epoch}` : ''}`;
    case 'fenced':
      return `a new instance took over${e.epoch !== undefined ? `, epoch ${e.epoch}` : ''}`;
    case 'deregistered':
      return `draining${why}`;
    case 'status':
      if (e.reason === 'serve') return 'promoted: observing → serving';
      return `${e.from ?? '?'} → ${e.to ?? '?'}${why}`;
    case 'ejected':
      return `ejected as a slow outlier${why}`;
    case 'dependency':
      return `dependency ${e.dependency ?? '?'} ${e.state ?? ''}`;
    default:
      return undefined;
  }
}

/**
 * Recent outcomes and failures grouped by error_code, most frequent first.
 * @param {Agent} a
 */
function failuresBody(a) {
  const r = a.recent ?? { completed: 0, failed: 0, failures_by_code: {}, success_rate: null };
  const codes = Object.entries(r.failures_by_code).sort(
    (x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1),
  );
  const summary = h('p', { class: 'muted' }, [
    `${r.completed} completed, ${r.failed} failed among the tasks this router sent recently`,
    r.success_rate === null ? '' : ` · ${Math.round(r.success_rate * 100)} % succeeded`,
  ]);
  if (codes.length === 0) return [summary, h('p', { class: 'muted' }, ['No recent failure'])];
  return [
    summary,
    h('table', { id: 'agent-failures-table' }, [
      h('thead', {}, [h('tr', {}, [h('th', {}, ['error_code']), h('th', {}, ['failures'])])]),
      h(
        'tbody',
        {},
        codes.map(([code, n]) =>
          h('tr', { 'data-code': code }, [
            h('td', { class: 'mono' }, [code]),
            h('td', { class: 'num' }, [String(n)]),
          ]),
        ),
      ),
    ]),
  ];
}

/**
 * The last probe's answer and the dependencies it reported, those down first.
 * @param {Agent} a
 */
function probeBody(a) {
  const hc = a.health_check;
  if (!hc) return [h('p', { class: 'muted' }, ['No probe answer with a health check yet'])];
  const deps = Object.entries(hc.dependencies).sort(
    (x, y) => Number(x[1].ok) - Number(y[1].ok) || (x[0] < y[0] ? -1 : 1),
  );
  return [
    h('p', {}, [
      h('span', { class: hc.ok ? 'pill healthy' : 'pill offline' }, [hc.ok ? 'ok' : 'failing']),
      ' ',
      timeEl(hc.at),
    ]),
    deps.length === 0
      ? h('p', { class: 'muted' }, ['No dependencies reported'])
      : h('table', { id: 'agent-deps' }, [
          h('thead', {}, [
            h('tr', {}, [
              h('th', {}, ['dependency']),
              h('th', {}, ['state']),
              h('th', {}, ['latency']),
              h('th', {}, ['detail']),
            ]),
          ]),
          h(
            'tbody',
            {},
            deps.map(([name, d]) =>
              h('tr', { 'data-dependency': name, 'data-ok': String(d.ok) }, [
                h('td', { class: 'mono' }, [name]),
                h('td', {}, [
                  h('span', { class: d.ok ? 'chip' : 'chip warn' }, [d.ok ? 'ok' : 'down']),
                  a.dependency_down === name
                    ? h('span', { class: 'muted' }, [' down fleet-wide: no tasks'])
                    : undefined,
                ]),
                h('td', { class: 'num' }, [d.latency_ms === undefined ? '–' : fmtMs(d.latency_ms)]),
                h('td', {}, [d.detail ?? '']),
              ]),
            ),
          ),
        ]),
  ];
}

/**
 * @param {HTMLElement} root
 * @param {import('./pages.js').PageContext} ctx
 * @param {string} agentId
 */
export async function mountAgent(root, ctx, agentId) {
  const back = h('a', { href: '/console/agents', class: 'back' }, ['← all agents']);
  root.replaceChildren(back, h('p', { class: 'muted' }, ['Loading…']));
  const loaded = await loadAgents();
  if (!loaded.ok) {
    root.replaceChildren(back, h('p', { class: 'error', id: 'agent-error' }, [errorText(loaded)]));
    return;
  }
  const found = loaded.reply.agents.find((a) => a.agent_id === agentId);
  if (!found) {
    // Another tenant's agent is answered like one that does not exist, as the API does.
    root.replaceChildren(
      back,
      h('p', { class: 'error', id: 'agent-error', 'data-error': 'AGENT_NOT_FOUND' }, [
        `Agent ${agentId} is not registered (or this key may not see it).`,
      ]),
    );
    return;
  }
  /** @type {Agent} */
  let agent = found;
  const said = statusLine('agent-action-status');
  const summary = h('div', { class: 'agent-summary', id: 'agent-summary' });
  const actions = h('div', { class: 'agent-actions', id: 'agent-actions' });
  const details = h('div', { id: 'agent-details' });
  const failures = h('div', { id: 'agent-failures' });
  const probe = h('div', { id: 'agent-probe' });
  const history = h('ol', { class: 'events agent-history', id: 'agent-history' });
  const historyNote = ctx.operator
    ? 'from the fleet events, newest first'
    : 'status changes are shown to operators';

  const render = () => {
    summary.replaceChildren(
      h('span', { id: 'agent-status' }, [statusPill(agent.status)]),
      h('span', { id: 'agent-mode' }, [modeChip(agent)]),
      h('span', {}, [h('span', { class: 'muted' }, ['health ']), healthText(agent)]),
      h('span', { class: 'load' }, [h('span', { class: 'muted' }, ['load ']), ...loadCell(agent)]),
      h('span', {}, [h('span', { class: 'muted' }, ['heartbeat ']), leaseText(agent)]),
    );
    actions.replaceChildren(...(ctx.operator ? operatorActions() : []));
    details.replaceChildren(
      facts(
        [
          ['tenant', `${agent.tenant}${agent.shared ? ' (shared: serves every tenant)' : ''}`],
          ['capabilities', h('span', {}, chips(agent.capabilities, 'capability'))],
          ['tags', h('span', {}, chips(agent.tags ?? [], 'tag'))],
          ['region', agent.region || '–'],
          ['channel', agent.channel],
          ['weight', h('span', { id: 'agent-weight' }, [String(agent.weight)])],
          ['priority', String(agent.priority)],
          ['runtime', runtimeText(agent)],
          [
            'execution EWMA',
            Object.entries(agent.ewma_ms)
              .map(([c, ms]) => `${c} ${fmtMs(ms)}`)
              .join(' · ') || '–',
          ],
          ['registered', timeEl(agent.registered_at)],
          ['last heartbeat', timeEl(agent.last_heartbeat_at)],
          ['instance', agent.instance_id],
          ['epoch', agent.epoch === undefined ? undefined : String(agent.epoch)],
          [
            'ejected until',
            agent.ejected_until > Date.now() ? timeEl(agent.ejected_until) : undefined,
          ],
          ['degraded until', agent.degraded_until ? timeEl(agent.degraded_until) : undefined],
          ['dependency down', agent.dependency_down],
          ['endpoint', agent.unreachable ? 'unreachable (its relay says)' : undefined],
        ],
        'agent-facts',
      ),
    );
    failures.replaceChildren(...failuresBody(agent));
    probe.replaceChildren(...probeBody(agent));
  };

  /** @param {'drain' | 'serve'} what */
  const path = (what) => `/v1/agents/${encodeURIComponent(agentId)}/${what}`;

  const operatorActions = () => {
    /** @type {Node[]} */
    const out = [];
    if (agent.status !== 'DRAINING')
      out.push(
        confirmButton(
          'drain',
          'Drain',
          `Drain ${agentId}? It gets no new task; those in flight finish, then it is removed.`,
          async () => {
            const reply = await sendJson('POST', path('drain'));
            if (reply.status !== 200) {
              said.say(`Drain refused: ${errorText(reply)}`, true);
              return;
            }
            const ack = /** @type {{ status: string }} */ (reply.body);
            agent = { ...agent, status: ack.status };
            said.say(`${agentId} is draining: no new task; removed once its tasks finish.`);
            render();
          },
        ),
      );
    if (agent.observe) {
      const weight = h('input', {
        id: 'agent-weight-input',
        type: 'number',
        min: '0.1',
        max: '10',
        step: '0.1',
        placeholder: String(agent.weight),
        'aria-label': 'Routing weight (optional, 0.1–10)',
      });
      out.push(
        h('span', { class: 'promote' }, [
          h('label', {}, [h('span', { class: 'muted' }, ['weight ']), weight]),
          button(
            'promote',
            'Promote to serving',
            async () => {
              const w = weight.value.trim();
              const reply = await sendJson('POST', path('serve'), w ? { weight: Number(w) } : {});
              if (reply.status !== 200) {
                said.say(`Promote refused: ${errorText(reply)}`, true);
                return;
              }
              const view = /** @type {Agent} */ (reply.body);
              agent = { ...agent, ...view, recent: agent.recent };
              said.say(`${agentId} now serves caller traffic (weight ${agent.weight}).`);
              render();
            },
            'primary',
          ),
        ]),
      );
    }
    return out;
  };

  root.replaceChildren(
    back,
    card(
      'agent',
      agentId,
      [summary, actions, said.el, details],
      `${agent.tenant} · read ${fmtClock(Date.now())}`,
    ),
    h('div', { class: 'agent-grid' }, [
      card('agent-failures-card', 'Recent failures', [failures]),
      card('agent-probe-card', 'Last probe and dependencies', [probe]),
    ]),
    card('agent-history-card', 'Health history', [history], historyNote),
  );
  root.dataset.agentId = agentId;
  render();
  followHistory(agentId, history);
}

/**
 * Fills `list` with the agent's events among the recent fleet events, then live ones.
 * @param {string} agentId
 * @param {HTMLOListElement} list
 */
function followHistory(agentId, list) {
  const empty = h('li', { class: 'muted empty' }, ['No status change in the recent fleet events']);
  list.replaceChildren(empty);
  // EventSource reconnects by itself and sends Last-Event-ID, so nothing is missed.
  const source = new EventSource(`/v1/console/events?backlog=${BACKLOG}`);
  source.onmessage = (msg) => {
    /** @type {unknown} */
    let data;
    try {
      data = JSON.parse(String(msg.data));
    } catch {
      return;
    }
    const e = /** @type {FleetEvent} */ (data);
    const text = historyText(e, agentId);
    if (text === undefined) return;
    empty.remove();
    list.prepend(
      h('li', { 'data-kind': e.kind, 'data-id': e.id }, [
        h('time', { datetime: new Date(e.at).toISOString() }, [fmtClock(e.at)]),
        h('span', { class: `kind ${(e.to ?? e.kind).toLowerCase()}` }, [e.kind]),
        h('span', { class: 'text' }, [text]),
      ]),
    );
    while (list.children.length > MAX_HISTORY) list.lastElementChild?.remove();
  };
}
