// The console's schedules page: `GET /v1/schedules` with each one's cadence, next and last run
// and the task its last tick fired; pause, resume and delete (callers their own tenant's,
// operators any: the API's roles), each showing its effect on the row. Filters by state and
// capability apply on the page (the API takes none) and live in the URL.
import {
  button,
  card,
  confirmButton,
  emptyRow,
  filterBar,
  fmtSpan,
  statusLine,
  table,
  taskLink,
  timeEl,
} from './admin-table.js';
import { errorText, getJson, h, sendJson } from './dom.js';

/**
 * @typedef {{ schedule_id: string, cron?: string, every_ms?: number, timezone?: string,
 *   task: { capability?: string } | null, paused: boolean, next_run_at: number, last_run_at: number,
 *   last_task_id?: string, created_at: number }} Schedule
 */

const COLUMNS = 8;

/** @param {Schedule} s */
function cadence(s) {
  if (s.cron !== undefined) return `cron ${s.cron}${s.timezone ? ` (${s.timezone})` : ''}`;
  return `every ${fmtSpan(s.every_ms ?? 0)}`;
}

/** @param {Schedule} s */
const capabilityOf = (s) =>
  s.task && typeof s.task.capability === 'string' ? s.task.capability : '';

/**
 * @param {HTMLElement} root
 * @param {import('./pages.js').PageContext} ctx
 */
export function mount(root, ctx) {
  const { wrap, body } = table('schedules', [
    'Schedule',
    'Cadence',
    'Capability',
    'State',
    'Next run',
    'Last run',
    'Created',
    '',
  ]);
  const status = statusLine('schedules-status');
  const note = h('span', {}, ['']);
  const filters = filterBar(
    'schedule-filters',
    [
      { name: 'capability', label: 'Capability', placeholder: 'any' },
      {
        name: 'state',
        label: 'State',
        options: [
          ['', 'any'],
          ['active', 'active'],
          ['paused', 'paused'],
        ],
      },
    ],
    ctx,
    () => void load(),
  );
  root.replaceChildren(card('schedules-card', 'Schedules', [filters, wrap, status.el], note));

  /**
   * Pauses or resumes a schedule; the reply (its new state) replaces its row.
   * @param {HTMLTableRowElement} tr
   * @param {'pause' | 'resume'} action
   */
  async function setState(tr, action) {
    const id = tr.dataset.scheduleId ?? '';
    const reply = await sendJson('POST', `/v1/schedules/${encodeURIComponent(id)}/${action}`);
    if (reply.status !== 200) {
      status.say(`${action} ${id}: ${errorText(reply)}`, true);
      return;
    }
    tr.replaceWith(row(/** @type {Schedule} */ (reply.body)));
    status.say(`${id} ${action === 'pause' ? 'paused' : 'resumed'}.`);
  }

  /** @param {HTMLTableRowElement} tr */
  async function remove(tr) {
    const id = tr.dataset.scheduleId ?? '';
    const reply = await sendJson('DELETE', `/v1/schedules/${encodeURIComponent(id)}`);
    if (reply.status !== 204) {
      status.say(`delete ${id}: ${errorText(reply)}`, true);
      return;
    }
    tr.remove();
    status.say(`${id} deleted; the tasks it fired are kept.`);
    await load();
  }

  /**
   * @param {Schedule} s
   * @returns {HTMLTableRowElement}
   */
  function row(s) {
    const state = s.paused ? 'paused' : 'active';
    /** @type {HTMLTableRowElement} */
    const tr = h('tr', { 'data-schedule-id': s.schedule_id, 'data-state': state }, [
      h('td', {}, [h('span', { class: 'mono id', title: s.schedule_id }, [s.schedule_id])]),
      h('td', { class: 'mono nowrap' }, [cadence(s)]),
      h('td', {}, [h('span', { class: 'chip' }, [capabilityOf(s) || '–'])]),
      h('td', {}, [h('span', { class: `pill ${state}` }, [state])]),
      h('td', { class: 'num', 'data-field': 'next' }, [
        s.paused ? h('span', { class: 'muted' }, ['paused']) : timeEl(s.next_run_at),
      ]),
      h('td', { class: 'num', 'data-field': 'last' }, [
        timeEl(s.last_run_at),
        s.last_task_id ? h('br') : undefined,
        s.last_task_id ? taskLink(s.last_task_id) : undefined,
      ]),
      h('td', { class: 'num' }, [timeEl(s.created_at)]),
      h('td', { class: 'actions' }, [
        s.paused
          ? button('resume', 'Resume', () => setState(tr, 'resume'))
          : button('pause', 'Pause', () => setState(tr, 'pause')),
        confirmButton('delete', 'Delete', `Delete ${s.schedule_id}?`, () => remove(tr)),
      ]),
    ]);
    return tr;
  }

  async function load() {
    const reply = await getJson('/v1/schedules');
    if (reply.status !== 200) {
      body.replaceChildren(emptyRow(COLUMNS, errorText(reply), true));
      return;
    }
    const all = /** @type {{ schedules: Schedule[] }} */ (reply.body).schedules;
    const capability = ctx.query.get('capability') ?? '';
    const state = ctx.query.get('state') ?? '';
    const shown = all
      .filter((s) => !capability || capabilityOf(s) === capability)
      .filter((s) => !state || (state === 'paused') === s.paused)
      .sort((a, b) => a.schedule_id.localeCompare(b.schedule_id));
    body.replaceChildren(
      ...(shown.length
        ? shown.map(row)
        : [emptyRow(COLUMNS, all.length ? 'No schedules match.' : 'No schedules yet.')]),
    );
    note.textContent = `${shown.length} of ${all.length} · ${
      ctx.operator ? 'every tenant' : `tenant ${ctx.session.tenant}`
    }`;
  }

  void load();
}
