// The tasks page's task view (`/console/tasks/<id>`): the task's state from GET /v1/tasks/:id
// (live from Redis, or its archive in InfluxDB once expired; stages alone from /timeline when
// only those are left), its waterfall, payload, result or error, children, and the actions the
// session's role may take on it: cancel while it runs, replay once dead-lettered.
import { timelineChart } from './charts.js';
import { errorText, fmtMs, getJson, h, sendJson } from './dom.js';
import { childrenTree } from './task-children.js';
import {
  ACTION_ROLES,
  FINAL,
  LIVE_EVERY_MS,
  fmtWhen,
  statusPill,
  taskLink,
  whileLive,
} from './task-common.js';

/**
 * @typedef {import('./pages.js').PageContext} PageContext
 * @typedef {import('./charts.js').TimelineEntry} TimelineEntry
 * @typedef {{ task_id: string, status: string, capability: string, agent_id: string, attempts: number,
 *   callback_topic?: string, trace_id?: string, created_at: number, deadline_ms: number,
 *   result?: unknown, error?: string, dead_reason?: string, parent_task_id?: string, hops?: number,
 *   children?: string[], priority?: number, fallback_capabilities?: string[],
 *   timeline: TimelineEntry[], archived?: boolean, payload?: unknown, payload_cut?: boolean,
 *   result_cut?: boolean }} TaskView
 * @typedef {{ stage: string, at: number, agent_id: string | null, attempt: number | null,
 *   reason?: string }} Stage
 * @typedef {{ task_id: string, source: string, parent_task_id?: string, stages: Stage[] }} TimelineReply
 */

/** @param {unknown} value */
const pretty = (value) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/**
 * @param {string} text
 * @param {string} [id]
 */
const muted = (text, id) => h('p', { class: 'muted', id }, [text]);

/**
 * A card with a heading.
 * @param {string} id
 * @param {string} title
 * @param {HTMLElement} content
 * @param {boolean} [wide]
 * @param {HTMLElement} [aside]
 */
const card = (id, title, content, wide = false, aside = undefined) =>
  h('section', { class: wide ? 'card wide' : 'card', id }, [
    h('div', { class: 'card-head' }, [h('h2', {}, [title]), aside]),
    content,
  ]);

/**
 * The tenant a task id names as the session sees it: `<tenant>/<id>` is another tenant's
 * (operators), a bare id the session's own.
 * @param {string} taskId
 * @param {string} own
 */
const tenantOf = (taskId, own) => {
  const slash = taskId.indexOf('/');
  return slash > 0 ? taskId.slice(0, slash) : own;
};

/**
 * The task's facts.
 * @param {TaskView} t
 * @param {string} tenant
 */
function facts(t, tenant) {
  /** @type {[string, Node | string][]} */
  const rows = [
    ['status', statusPill(t.status)],
    [
      'capability',
      h('a', { href: `/console/tasks?capability=${encodeURIComponent(t.capability)}` }, [
        t.capability,
      ]),
    ],
    [
      'agent',
      t.agent_id
        ? h('a', { href: `/console/agents/${encodeURIComponent(t.agent_id)}`, class: 'mono' }, [
            t.agent_id,
          ])
        : '–',
    ],
    ['attempts', String(t.attempts)],
    ['tenant', tenant],
    ['created', t.created_at ? fmtWhen(t.created_at) : '–'],
  ];
  if (t.deadline_ms > 0) rows.push(['deadline', fmtWhen(t.deadline_ms)]);
  if (t.trace_id) rows.push(['trace id', h('span', { class: 'mono' }, [t.trace_id])]);
  if (t.parent_task_id) rows.push(['parent', taskLink(t.parent_task_id, { id: 'task-parent' })]);
  if (t.priority) rows.push(['priority', String(t.priority)]);
  if (t.fallback_capabilities?.length) rows.push(['fallbacks', t.fallback_capabilities.join(', ')]);
  if (t.callback_topic) rows.push(['callback topic', t.callback_topic]);
  if (t.dead_reason) rows.push(['dead because', t.dead_reason]);
  if (t.archived) rows.push(['read from', 'the InfluxDB archive (its Redis state expired)']);
  return rows.flatMap(([k, v]) => [h('dt', {}, [k]), h('dd', {}, [v])]);
}

/** @param {TaskView} t */
function payloadOf(t) {
  if (t.payload !== undefined)
    return [
      h('pre', { class: 'json', id: 'task-payload-json' }, [pretty(t.payload)]),
      t.payload_cut ? muted('Cut: the archive keeps only its first bytes.') : undefined,
    ];
  return [
    muted(
      t.archived
        ? 'The archive keeps no payload of this capability (REACH_ARCHIVE_PAYLOADS).'
        : t.status === 'completed' || t.status === 'cancelled'
          ? `Not kept in Redis once the task is ${t.status}: its archive shows it, if its capability archives payloads.`
          : 'No payload.',
      'task-payload-none',
    ),
  ];
}

/** @param {TaskView} t */
function outcomeOf(t) {
  /** @type {(Node | undefined)[]} */
  const out = [];
  if (t.result !== undefined) {
    out.push(h('pre', { class: 'json', id: 'task-result-json' }, [pretty(t.result)]));
    if (t.result_cut) out.push(muted('Cut: the archive keeps only its first bytes.'));
  }
  if (t.error !== undefined)
    out.push(h('pre', { class: 'json error', id: 'task-error' }, [pretty(t.error)]));
  if (out.length === 0)
    out.push(muted(FINAL.has(t.status) ? 'No result.' : 'No result yet.', 'task-outcome-none'));
  return out;
}

/**
 * The view of `/console/tasks/<id>`.
 * @param {HTMLElement} root
 * @param {PageContext} ctx
 * @param {string} taskId
 */
export function mountView(root, ctx, taskId) {
  const path = encodeURIComponent(taskId);
  const mayAct = ACTION_ROLES.has(ctx.session.role);
  const actions = h('div', { class: 'task-actions', id: 'task-actions' });
  const message = h('p', { id: 'task-message', hidden: '' });
  const factList = h('dl', { class: 'facts', id: 'task-facts' });
  const chart = h('div', { class: 'chart', id: 'task-timeline' });
  const chartNote = h('span', { class: 'muted', id: 'task-timeline-note' });
  const payload = h('div', { id: 'task-payload' });
  const outcome = h('div', { id: 'task-outcome' });
  const children = h('div', { id: 'task-children' }, [muted('Loading…')]);
  const page = h('div', { class: 'task-page', hidden: '' }, [
    card('task-timeline-card', 'Timeline', chart, false, chartNote),
    card('task-payload-card', 'Payload', payload),
    card('task-outcome-card', 'Result', outcome),
    card('task-children-card', 'Children', children, true),
  ]);
  root.replaceChildren(
    h('section', { class: 'card', id: 'task-card' }, [
      h('div', { class: 'card-head' }, [
        h('h2', {}, ['Task ', h('span', { class: 'mono', id: 'task-id' }, [taskId])]),
        actions,
      ]),
      message,
      factList,
    ]),
    page,
  );

  /** @type {string | undefined} */
  let status;
  /** The children last listed, to list them again only when they change. */
  let childrenKey = '';
  let live = false;

  const say = (/** @type {string} */ text, /** @type {boolean} */ bad) => {
    message.hidden = false;
    message.className = bad ? 'error' : 'notice';
    message.textContent = text;
  };

  /**
   * @param {string} label
   * @param {string} action
   * @param {() => Promise<{ status: number, body: unknown }>} send
   * @param {(body: unknown) => string} done
   */
  const button = (label, action, send, done) => {
    const b = h('button', { type: 'button', 'data-action': action }, [label]);
    b.addEventListener('click', () => {
      b.disabled = true;
      void send().then(async (reply) => {
        if (reply.status === 202) say(done(reply.body), false);
        else say(errorText(reply), true);
        await read();
        goLive();
      });
    });
    return b;
  };

  /** @param {TaskView} t */
  const showActions = (t) => {
    const final = FINAL.has(t.status);
    actions.replaceChildren(
      ...(mayAct && !final
        ? [
            button(
              'Cancel',
              'cancel',
              () => sendJson('POST', `/v1/tasks/${path}/cancel`),
              () => 'Cancelled: the task and its children are final; its agent was told to stop.',
            ),
          ]
        : []),
      ...(mayAct && t.status === 'dead' && !t.archived
        ? [
            button(
              'Replay',
              'replay',
              () => sendJson('POST', `/v1/dlq/${path}/replay`),
              (body) =>
                `Replayed: attempt ${String(/** @type {{ attempt?: number }} */ (body).attempt ?? '?')} is on its way.`,
            ),
          ]
        : []),
    );
  };

  /** @param {TaskView} t */
  const show = (t) => {
    status = t.status;
    factList.dataset.taskId = t.task_id;
    factList.dataset.status = t.status;
    factList.replaceChildren(...facts(t, tenantOf(t.task_id, ctx.session.tenant)));
    showActions(t);
    const timeline = [...t.timeline].sort((a, b) => a.at - b.at);
    chart.dataset.stages = timeline.map((e) => e.stage).join(' ');
    chart.replaceChildren(timelineChart(timeline));
    const span = timeline.length > 1 ? (timeline.at(-1)?.at ?? 0) - (timeline[0]?.at ?? 0) : 0;
    chartNote.textContent = `${timeline.length} stages over ${fmtMs(span)}`;
    payload.replaceChildren(...payloadOf(t).filter((n) => n !== undefined));
    outcome.replaceChildren(...outcomeOf(t).filter((n) => n !== undefined));
    page.hidden = false;
    const key = `${t.status} ${(t.children ?? []).join(' ')}`;
    if (key !== childrenKey) {
      childrenKey = key;
      void childrenTree(t).then((tree) => children.replaceChildren(tree));
    }
  };

  /**
   * Only the stages are left (the state expired, no archived record): the timeline route's.
   * @returns {Promise<boolean>} whether it found them
   */
  const showStages = async () => {
    const reply = await getJson(`/v1/tasks/${path}/timeline`);
    if (reply.status !== 200) return false;
    const { stages } = /** @type {TimelineReply} */ (reply.body);
    if (stages.length === 0) return false;
    const last = stages.at(-1)?.stage ?? '';
    status = last;
    factList.dataset.taskId = taskId;
    factList.dataset.status = last;
    factList.replaceChildren(
      h('dt', {}, ['last stage']),
      h('dd', {}, [statusPill(last)]),
      h('dt', {}, ['tenant']),
      h('dd', {}, [tenantOf(taskId, ctx.session.tenant)]),
    );
    actions.replaceChildren();
    /** @type {TimelineEntry[]} */
    const timeline = stages.map((st) => ({
      stage: st.stage,
      at: st.at,
      agent_id: st.agent_id ?? undefined,
      attempt: st.attempt ?? undefined,
    }));
    chart.dataset.stages = timeline.map((e) => e.stage).join(' ');
    chart.replaceChildren(timelineChart(timeline));
    chartNote.textContent = 'The task’s state expired: its stages from InfluxDB.';
    payload.replaceChildren(muted('Not kept: only the stages are left.'));
    outcome.replaceChildren(muted('Not kept: only the stages are left.'));
    children.replaceChildren(muted('Not kept: only the stages are left.'));
    page.hidden = false;
    return true;
  };

  const read = async () => {
    const reply = await getJson(`/v1/tasks/${path}?include=payload`);
    if (reply.status === 200) {
      show(/** @type {TaskView} */ (reply.body));
      return;
    }
    if (reply.status === 404 && (await showStages())) return;
    // Unknown, another tenant's (the same 404), or the archive not answering (503).
    if (status === undefined) {
      factList.replaceChildren();
      actions.replaceChildren();
      page.hidden = true;
    }
    say(errorText(reply), true);
  };

  /** Reads the task again every LIVE_EVERY_MS until it is final. */
  const goLive = () => {
    if (live || status === undefined || FINAL.has(status)) return;
    live = true;
    whileLive(async () => {
      await read();
      live = status !== undefined && !FINAL.has(status);
      return live;
    }, LIVE_EVERY_MS);
  };

  void read().then(goLive);
}
