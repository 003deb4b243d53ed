// The console's dead-letters page: `GET /v1/dlq` newest first, filtered by capability (by the API)
// and reason (on the page: the API takes none), more rows on demand; inspect a dead letter, replay
// one (`POST /v1/dlq/:task_id/replay`) or a selection, one request each. The API scopes what a
// key sees and may replay: a caller its own tenant's, an operator every tenant's.
import {
  card,
  emptyRow,
  filterBar,
  button,
  statusLine,
  table,
  taskLink,
  timeEl,
} from './admin-table.js';
import { errorText, getJson, h, sendJson } from './dom.js';

/** @typedef {{ task_id: string, capability: string, reason: string, dead_at: number, attempts: number, error?: string }} DlqItem */

/** Why a task is dead (docs/errors.md); the API's `reason`. */
const REASONS = ['max_attempts', 'deadline', 'loop', 'not_retryable', 'no_agent'];
/** Rows asked for at first, and added by "Show more". */
const PAGE = 50;
/** The most `GET /v1/dlq` lists at once. */
const MAX_LIMIT = 1000;
const COLUMNS = 7;

/**
 * The limit the URL asks for, within the API's bounds.
 * @param {URLSearchParams} q
 */
function limitOf(q) {
  const n = Number(q.get('limit') ?? PAGE);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, MAX_LIMIT) : PAGE;
}

/**
 * The error text of a dead letter, pretty when it is JSON.
 * @param {string} text
 */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * @param {HTMLElement} root
 * @param {import('./pages.js').PageContext} ctx
 */
export function mount(root, ctx) {
  const all = h('input', { type: 'checkbox', id: 'dlq-all', 'aria-label': 'Select every row' });
  const { wrap, body } = table('dlq', [
    all,
    'Task',
    'Capability',
    'Reason',
    'Attempts',
    'Dead since',
    '',
  ]);
  const status = statusLine('dlq-status');
  const more = button('more', 'Show more', () => {
    ctx.setQuery({ limit: String(Math.min(limitOf(ctx.query) + PAGE, MAX_LIMIT)) });
    return load();
  });
  const count = h('span', { class: 'muted', id: 'dlq-selected' });
  const replaySelected = button(
    'replay-selected',
    'Replay selected',
    () => replayMany(),
    'primary',
  );
  const filters = filterBar(
    'dlq-filters',
    [
      { name: 'capability', label: 'Capability', placeholder: 'any' },
      {
        name: 'reason',
        label: 'Reason',
        options: [['', 'any'], ...REASONS.map((r) => /** @type {[string, string]} */ ([r, r]))],
      },
    ],
    ctx,
    () => void load(),
  );
  const note = h('span', {}, ['newest first']);
  root.replaceChildren(
    card(
      'dead-letters',
      'Dead letters',
      [
        filters,
        h('div', { class: 'bulk' }, [replaySelected, count]),
        wrap,
        h('p', {}, [more]),
        status.el,
      ],
      note,
    ),
  );

  /** Rows still dead, by task id: the ones a checkbox may pick. */
  const checks = () =>
    /** @type {HTMLInputElement[]} */ ([
      ...body.querySelectorAll('tr[data-state="dead"] input[type="checkbox"]'),
    ]);
  const picked = () => checks().filter((c) => c.checked);
  const updateCount = () => {
    const n = picked().length;
    count.textContent = n ? `${n} selected` : 'tick rows to replay several at once';
    const boxes = checks();
    all.checked = boxes.length > 0 && n === boxes.length;
  };
  all.addEventListener('change', () => {
    for (const c of checks()) c.checked = all.checked;
    updateCount();
  });

  /**
   * Replays one dead letter and shows the outcome on its row.
   * @param {HTMLTableRowElement} row
   * @returns {Promise<boolean>}
   */
  async function replay(row) {
    const id = row.dataset.taskId ?? '';
    const result = /** @type {HTMLElement} */ (row.querySelector('.row-result'));
    const reply = await sendJson('POST', `/v1/dlq/${encodeURIComponent(id)}/replay`);
    if (reply.status === 202) {
      const { attempt } = /** @type {{ attempt: number }} */ (reply.body);
      row.dataset.state = 'replayed';
      const pill = row.querySelector('.pill');
      if (pill) {
        pill.className = 'pill replayed';
        pill.textContent = 'replayed';
      }
      const box = /** @type {HTMLInputElement | null} */ (row.querySelector('input'));
      if (box) {
        box.checked = false;
        box.disabled = true;
      }
      row.querySelector('button[data-action="replay"]')?.remove();
      result.className = 'row-result muted';
      result.textContent = `sent again as attempt ${attempt}`;
      return true;
    }
    result.className = 'row-result error';
    result.textContent = errorText(reply);
    row.dataset.result = 'error';
    return false;
  }

  async function replayMany() {
    const rows = picked().map((c) => /** @type {HTMLTableRowElement} */ (c.closest('tr')));
    if (rows.length === 0) {
      status.say('Tick the rows to replay first.', true);
      return;
    }
    let ok = 0;
    for (const row of rows) if (await replay(row)) ok++;
    const failed = rows.length - ok;
    status.say(
      `Replayed ${ok} of ${rows.length}${failed ? `; ${failed} refused (see their rows)` : ''}.`,
      failed > 0,
    );
    updateCount();
  }

  /**
   * Shows or hides a dead letter's details under its row.
   * @param {HTMLTableRowElement} row
   * @param {DlqItem} item
   */
  function inspect(row, item) {
    const next = row.nextElementSibling;
    if (next instanceof HTMLTableRowElement && next.classList.contains('detail-row')) {
      next.remove();
      return;
    }
    const detail = {
      task_id: item.task_id,
      capability: item.capability,
      reason: item.reason,
      attempts: item.attempts,
      dead_at: new Date(item.dead_at).toISOString(),
    };
    row.after(
      h('tr', { class: 'detail-row', 'data-detail-of': item.task_id }, [
        h('td', { colspan: COLUMNS }, [
          h('p', { class: 'muted' }, ['Last error']),
          h('pre', { class: 'detail', 'data-field': 'error' }, [
            item.error ? pretty(item.error) : '(none recorded)',
          ]),
          h('p', { class: 'muted' }, ['Dead letter']),
          h('pre', { class: 'detail' }, [JSON.stringify(detail, null, 2)]),
          h('p', {}, [
            h('a', { href: `/console/tasks/${encodeURIComponent(item.task_id)}` }, [
              'Open the task: its timeline and result',
            ]),
          ]),
        ]),
      ]),
    );
  }

  /** @param {DlqItem} item */
  function row(item) {
    const pick = h('input', { type: 'checkbox', 'aria-label': `Select ${item.task_id}` });
    pick.addEventListener('change', updateCount);
    /** @type {HTMLTableRowElement} */
    const tr = h('tr', { 'data-task-id': item.task_id, 'data-state': 'dead' }, [
      h('td', { class: 'pick' }, [pick]),
      h('td', {}, [taskLink(item.task_id)]),
      h('td', {}, [h('span', { class: 'chip' }, [item.capability])]),
      h('td', { 'data-reason': item.reason }, [h('span', { class: 'pill dead' }, [item.reason])]),
      h('td', { class: 'num' }, [String(item.attempts)]),
      h('td', { class: 'num' }, [timeEl(item.dead_at)]),
      h('td', { class: 'actions' }, [
        button('inspect', 'Inspect', () => inspect(tr, item)),
        button('replay', 'Replay', async () => {
          await replay(tr);
          updateCount();
        }),
        h('span', { class: 'row-result' }),
      ]),
    ]);
    return tr;
  }

  async function load() {
    const limit = limitOf(ctx.query);
    const capability = ctx.query.get('capability') ?? '';
    const reason = ctx.query.get('reason') ?? '';
    const params = new URLSearchParams({ limit: String(limit) });
    if (capability) params.set('capability', capability);
    const reply = await getJson(`/v1/dlq?${params.toString()}`);
    if (reply.status !== 200) {
      body.replaceChildren(emptyRow(COLUMNS, errorText(reply), true));
      more.hidden = true;
      updateCount();
      return;
    }
    const items = /** @type {{ items: DlqItem[] }} */ (reply.body).items;
    const shown = reason ? items.filter((i) => i.reason === reason) : items;
    body.replaceChildren(
      ...(shown.length ? shown.map(row) : [emptyRow(COLUMNS, 'No dead letters match.')]),
    );
    body.dataset.count = String(shown.length);
    note.textContent =
      `${shown.length} shown` +
      (shown.length !== items.length ? ` of ${items.length} loaded` : '') +
      ' · newest first';
    more.hidden = items.length < limit || limit >= MAX_LIMIT;
    updateCount();
  }

  void load();
}
