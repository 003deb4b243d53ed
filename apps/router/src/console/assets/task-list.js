// The tasks page's list: task search (GET /v1/tasks) with every filter the API has, the filters
// in the URL, a page at a time; rows of unfinished tasks are read again until they end.
import { errorText, fmtClock, fmtMs, getJson, h } from './dom.js';
import {
  FINAL,
  LIVE_EVERY_MS,
  STATUSES,
  fmtWhen,
  statusPill,
  taskLink,
  whileLive,
} from './task-common.js';

/**
 * @typedef {import('./pages.js').PageContext} PageContext
 * @typedef {import('./task-common.js').TaskSummary} TaskSummary
 * @typedef {import('./task-common.js').SearchPage} SearchPage
 * @typedef {{ name: string, label: string, placeholder: string, type?: string, title?: string }} Filter
 */

/** The search's text filters, named as the query parameters (TaskSearchQuery). */
const FILTERS = /** @type {Filter[]} */ ([
  { name: 'capability', label: 'Capability', placeholder: 'any' },
  { name: 'agent_id', label: 'Agent', placeholder: 'any' },
  { name: 'tenant', label: 'Tenant', placeholder: 'every tenant' },
  { name: 'error_code', label: 'Error code', placeholder: 'MODEL_NOT_LOADED' },
  { name: 'parent_task_id', label: 'Parent task', placeholder: 'task id' },
  {
    name: 'since',
    label: 'Since',
    placeholder: 'retention',
    title: 'An age (90s, 15m, 2h, 7d), a date (2026-12-01T10:00Z) or epoch ms',
  },
  { name: 'until', label: 'Until', placeholder: 'now', title: 'As since' },
  {
    name: 'min_duration_ms',
    label: 'Took at least (ms)',
    placeholder: '0',
    type: 'number',
    title: 'Ended tasks only, created to end',
  },
  { name: 'limit', label: 'Per page', placeholder: '100', type: 'number' },
]);

/** Every query parameter the list reads from the URL. */
const PARAMS = [...FILTERS.map((f) => f.name), 'status', 'cursor'];

/** Unfinished rows missing from a re-read page (pushed off by newer tasks) read one by one, at most. */
const MAX_SINGLE_READS = 20;

/**
 * @param {TaskSummary} t
 * @param {boolean} showTenant
 */
function row(t, showTenant) {
  const took =
    t.duration_ms !== undefined
      ? fmtMs(t.duration_ms)
      : FINAL.has(t.status)
        ? '–'
        : `${fmtMs(Date.now() - t.created_at)} so far`;
  return h('tr', { 'data-task-id': t.task_id, 'data-status': t.status }, [
    h('td', {}, [taskLink(t.task_id)]),
    h('td', { 'data-cell': 'status' }, [statusPill(t.status)]),
    h('td', { class: 'mono' }, [t.capability]),
    h('td', { class: 'mono' }, [t.agent_id || h('span', { class: 'muted' }, ['–'])]),
    showTenant ? h('td', { class: 'mono' }, [t.tenant]) : undefined,
    h('td', { class: 'num' }, [String(t.attempts)]),
    h('td', { class: 'num', title: new Date(t.created_at).toISOString() }, [fmtWhen(t.created_at)]),
    h('td', { class: 'num' }, [took]),
    h('td', { class: 'mono' }, [t.error_code ?? '']),
    h('td', {}, [t.parent_task_id ? taskLink(t.parent_task_id) : '']),
    h('td', {}, [
      t.archived ? h('span', { class: 'chip', title: 'read from InfluxDB' }, ['archived']) : '',
    ]),
  ]);
}

/**
 * The filter form, filled from the URL.
 * @param {PageContext} ctx
 * @param {(values: Record<string, string | undefined>) => void} onSearch
 */
function filterForm(ctx, onSearch) {
  const q = ctx.query;
  // Another tenant's tasks are the operators' to search; a caller sees the field only when the
  // URL names one (the API then answers FORBIDDEN, shown on the page).
  const shown = FILTERS.filter((f) => f.name !== 'tenant' || ctx.operator || q.has('tenant'));
  const inputs = shown.map((f) =>
    h('input', {
      id: `filter-${f.name}`,
      name: f.name,
      type: f.type ?? 'text',
      min: f.type === 'number' ? '0' : undefined,
      placeholder: f.placeholder,
      title: f.title,
      value: q.get(f.name) ?? undefined,
      spellcheck: 'false',
      autocomplete: 'off',
    }),
  );
  const picked = new Set((q.get('status') ?? '').split(',').filter(Boolean));
  const boxes = STATUSES.map((st) =>
    h('input', {
      type: 'checkbox',
      name: 'status',
      value: st,
      'data-status': st,
      checked: picked.has(st) ? '' : undefined,
    }),
  );
  const form = h('form', { id: 'task-filters', class: 'task-filters', autocomplete: 'off' }, [
    h(
      'div',
      { class: 'fields' },
      shown.map((f, i) => h('label', {}, [h('span', {}, [f.label]), inputs[i]])),
    ),
    h('fieldset', { class: 'statuses' }, [
      h('legend', {}, ['Status']),
      ...STATUSES.map((st, i) => h('label', { class: 'chip' }, [boxes[i], ` ${st}`])),
    ]),
    h('div', { class: 'buttons' }, [
      h('button', { type: 'submit', id: 'filter-search' }, ['Search']),
      h('button', { type: 'reset', id: 'filter-clear', class: 'plain' }, ['Clear']),
    ]),
  ]);
  const values = () => {
    /** @type {Record<string, string | undefined>} */
    const v = {};
    shown.forEach((f, i) => (v[f.name] = inputs[i]?.value.trim() || undefined));
    const statuses = boxes.filter((b) => b.checked).map((b) => b.value);
    v.status = statuses.length > 0 ? statuses.join(',') : undefined;
    v.cursor = undefined;
    return v;
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    onSearch(values());
  });
  form.addEventListener('reset', (e) => {
    e.preventDefault();
    for (const i of inputs) i.value = '';
    for (const b of boxes) b.checked = false;
    onSearch(values());
  });
  return form;
}

/**
 * The list of `/console/tasks`.
 * @param {HTMLElement} root
 * @param {PageContext} ctx
 */
export function mountList(root, ctx) {
  const showTenant = ctx.operator;
  const note = h('span', { class: 'muted', id: 'tasks-note' });
  const error = h('p', { class: 'error', id: 'tasks-error', hidden: '' });
  const body = h('tbody');
  const head = [
    'Task',
    'Status',
    'Capability',
    'Agent',
    showTenant ? 'Tenant' : undefined,
    'Attempts',
    'Created',
    'Took',
    'Error code',
    'Parent',
    '',
  ];
  const table = h('table', { id: 'tasks', class: 'tasks' }, [
    h('thead', {}, [
      h(
        'tr',
        {},
        head.filter((x) => x !== undefined).map((x) => h('th', {}, [x])),
      ),
    ]),
    body,
  ]);
  const first = h('button', { type: 'button', id: 'tasks-first', class: 'plain', hidden: '' }, [
    '« First page',
  ]);
  const next = h('button', { type: 'button', id: 'tasks-next', class: 'plain', hidden: '' }, [
    'Next page »',
  ]);
  const cols = head.filter((x) => x !== undefined).length;

  /** Which search the page shows: a later one makes the replies of an earlier one moot. */
  let generation = 0;
  /** @type {Map<string, HTMLTableRowElement>} */
  let rows = new Map();
  /** @type {string | null} */
  let nextCursor = null;

  const queryText = () => {
    const qs = new URLSearchParams();
    for (const name of PARAMS) {
      const v = ctx.query.get(name);
      if (v) qs.set(name, v);
    }
    return qs.toString();
  };
  const showError = (/** @type {string | undefined} */ text) => {
    error.hidden = text === undefined;
    error.textContent = text ?? '';
  };
  // A row whose task can no longer be read (expired, not archived) is left as it was last seen.
  const unfinished = () =>
    [...rows.values()].filter(
      (r) => !FINAL.has(r.dataset.status ?? '') && r.dataset.gone === undefined,
    );
  const noteText = (/** @type {SearchPage} */ page) => {
    const live = unfinished().length;
    return [
      `${page.items.length} task${page.items.length === 1 ? '' : 's'}`,
      page.source === 'redis+influxdb' ? 'from Redis and the InfluxDB archive' : 'from Redis',
      live > 0 ? `${live} unfinished, live` : '',
      fmtClock(Date.now()),
    ]
      .filter(Boolean)
      .join(' · ');
  };

  const load = async () => {
    const mine = ++generation;
    body.replaceChildren(h('tr', { class: 'empty' }, [h('td', { colspan: cols }, ['Searching…'])]));
    const reply = await getJson(`/v1/tasks?${queryText()}`);
    if (mine !== generation) return;
    rows = new Map();
    if (reply.status !== 200) {
      showError(errorText(reply));
      body.replaceChildren(
        h('tr', { class: 'empty' }, [h('td', { colspan: cols }, ['The search was refused.'])]),
      );
      note.textContent = '';
      first.hidden = next.hidden = true;
      return;
    }
    showError(undefined);
    const page = /** @type {SearchPage} */ (reply.body);
    for (const t of page.items) rows.set(t.task_id, row(t, showTenant));
    body.replaceChildren(...rows.values());
    if (rows.size === 0)
      body.append(h('tr', { class: 'empty' }, [h('td', { colspan: cols }, ['No task matches.'])]));
    nextCursor = page.next_cursor;
    next.hidden = nextCursor === null;
    first.hidden = !ctx.query.get('cursor');
    note.textContent = noteText(page);
    if (unfinished().length > 0) whileLive(() => refresh(mine), LIVE_EVERY_MS);
  };

  /**
   * Reads the page again and updates its unfinished rows in place; a row pushed off the page by
   * newer tasks is read by itself. Resolves whether any row is still unfinished.
   * @param {number} mine
   */
  const refresh = async (mine) => {
    if (mine !== generation) return false;
    const reply = await getJson(`/v1/tasks?${queryText()}`);
    if (mine !== generation) return false;
    if (reply.status !== 200) return true;
    const page = /** @type {SearchPage} */ (reply.body);
    const fresh = new Map(page.items.map((t) => [t.task_id, t]));
    const missing = [];
    for (const old of unfinished()) {
      const id = old.dataset.taskId ?? '';
      const t = fresh.get(id);
      if (!t) {
        missing.push(old);
        continue;
      }
      const updated = row(t, showTenant);
      old.replaceWith(updated);
      rows.set(id, updated);
    }
    await Promise.all(missing.slice(0, MAX_SINGLE_READS).map((r) => readOne(r)));
    if (mine !== generation) return false;
    note.textContent = noteText(page);
    return unfinished().length > 0;
  };

  /**
   * A row's status from the task's own view.
   * @param {HTMLTableRowElement} r
   */
  const readOne = async (r) => {
    const id = r.dataset.taskId ?? '';
    const reply = await getJson(`/v1/tasks/${encodeURIComponent(id)}`);
    if (reply.status === 404) r.dataset.gone = '';
    if (reply.status !== 200) return;
    const v = /** @type {{ status: string, agent_id: string, attempts: number }} */ (reply.body);
    r.dataset.status = v.status;
    r.querySelector('[data-cell="status"]')?.replaceChildren(statusPill(v.status));
  };

  const search = (/** @type {Record<string, string | undefined>} */ values) => {
    ctx.setQuery(values);
    void load();
  };
  first.addEventListener('click', () => search({ cursor: undefined }));
  next.addEventListener('click', () => {
    if (nextCursor) search({ cursor: nextCursor });
  });

  root.replaceChildren(
    h('section', { class: 'card wide', id: 'tasks-card' }, [
      h('div', { class: 'card-head' }, [h('h2', {}, ['Tasks']), note]),
      filterForm(ctx, search),
      error,
      h('div', { class: 'table-wrap' }, [table]),
      h('div', { class: 'pager' }, [first, next]),
    ]),
  );
  void load();
}
