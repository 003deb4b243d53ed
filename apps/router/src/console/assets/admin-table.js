// Shared pieces of the console's admin pages (dead letters, schedules, tenants & keys): a card
// with a table, a filter bar whose values live in the URL, buttons that ask before they destroy,
// and dates for people.
import { fmtMs, h } from './dom.js';

/**
 * A card with a heading, a note beside it, and the body nodes.
 * @param {string} id
 * @param {string} title
 * @param {(Node | string | undefined)[]} body
 * @param {Node | string} [note]
 */
export function card(id, title, body, note) {
  return h('section', { class: 'card wide', id, 'aria-labelledby': `${id}-title` }, [
    h('div', { class: 'card-head' }, [
      h('h2', { id: `${id}-title` }, [title]),
      note === undefined ? undefined : h('span', { class: 'muted', id: `${id}-note` }, [note]),
    ]),
    ...body,
  ]);
}

/**
 * A table with a header row and an empty body, in its scrolling wrapper.
 * @param {string} id
 * @param {(string | Node)[]} heads
 * @returns {{ wrap: HTMLDivElement, body: HTMLTableSectionElement }}
 */
export function table(id, heads) {
  const body = h('tbody');
  const wrap = h('div', { class: 'table-wrap' }, [
    h('table', { id, class: 'admin' }, [
      h('thead', {}, [
        h(
          'tr',
          {},
          heads.map((x) => h('th', {}, [x])),
        ),
      ]),
      body,
    ]),
  ]);
  return { wrap, body };
}

/**
 * The one row of an empty (or failed) table.
 * @param {number} span
 * @param {string} text
 * @param {boolean} [failed]
 */
export function emptyRow(span, text, failed = false) {
  return h('tr', { class: 'empty' }, [
    h('td', { colspan: span, class: failed ? 'error' : undefined }, [text]),
  ]);
}

/**
 * A small button for a row or a form.
 * @param {string} action data-action, for tests and styles
 * @param {string} label
 * @param {() => void | Promise<void>} onClick
 * @param {string} [tone] `danger` for destructive ones
 */
export function button(action, label, onClick, tone) {
  const b = h(
    'button',
    { type: 'button', class: `act${tone ? ` ${tone}` : ''}`, 'data-action': action },
    [label],
  );
  b.addEventListener('click', () => {
    void (async () => {
      b.disabled = true;
      try {
        await onClick();
      } finally {
        b.disabled = false;
      }
    })();
  });
  return b;
}

/**
 * A destructive button that asks first, in place: clicking it shows "question [yes] [cancel]";
 * only `yes` (data-action `confirm-<action>`) runs `onConfirm`.
 * @param {string} action
 * @param {string} label
 * @param {string} question
 * @param {() => Promise<void>} onConfirm
 */
export function confirmButton(action, label, question, onConfirm) {
  const box = h('span', { class: 'confirm' });
  const ask = () => {
    box.replaceChildren(
      h('span', { class: 'muted' }, [question, ' ']),
      button(`confirm-${action}`, `Yes, ${label.toLowerCase()}`, onConfirm, 'danger'),
      button('cancel', 'Cancel', idle),
    );
  };
  const idle = () => {
    box.replaceChildren(button(action, label, ask, 'danger'));
  };
  idle();
  return box;
}

/**
 * A span of time for people, coarse past a minute: 850 ms, 2.4 s, 5 min, 3 h 20 min, 7 d.
 * @param {number} ms
 */
export function fmtSpan(ms) {
  if (ms < 60_000) return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : fmtMs(ms);
  const min = Math.round(ms / 60_000);
  if (min < 60) return `${min} min`;
  const hours = Math.floor(min / 60);
  if (hours < 48) return `${hours} h${min % 60 ? ` ${min % 60} min` : ''}`;
  const days = Math.floor(hours / 24);
  return `${days} d${hours % 24 ? ` ${hours % 24} h` : ''}`;
}

/**
 * An instant for people: "12:04:05 (3 min ago)", or "(in 20 s)" for one ahead; with its date
 * when it is not today. `–` for 0.
 * @param {number} at epoch ms
 */
export function fmtWhen(at) {
  if (!at) return '–';
  const d = new Date(at);
  const today = new Date().toDateString() === d.toDateString();
  const clock = d.toLocaleTimeString([], { hour12: false });
  const when = today ? clock : `${d.toISOString().slice(0, 10)} ${clock}`;
  const diff = Date.now() - at;
  const rel = diff >= 0 ? `${fmtSpan(diff)} ago` : `in ${fmtSpan(-diff)}`;
  return `${when} (${rel})`;
}

/**
 * A `<time>` element showing {@link fmtWhen}, its title the ISO instant.
 * @param {number} at
 */
export function timeEl(at) {
  return h(
    'time',
    at ? { datetime: new Date(at).toISOString(), title: new Date(at).toISOString() } : {},
    [fmtWhen(at)],
  );
}

/**
 * A link to a task's page.
 * @param {string} taskId as the API shows it (`<tenant>/<id>` for another tenant's)
 */
export function taskLink(taskId) {
  return h(
    'a',
    { class: 'mono id', title: taskId, href: `/console/tasks/${encodeURIComponent(taskId)}` },
    [taskId],
  );
}

/**
 * @typedef {{ name: string, label: string, options?: [string, string][], placeholder?: string }} FilterField
 */

/**
 * A filter bar whose fields start from the URL's query and, on submit, write it back
 * (`ctx.setQuery`) and call `onChange`. A select applies at once.
 * @param {string} id
 * @param {FilterField[]} fields
 * @param {import('./pages.js').PageContext} ctx
 * @param {() => void} onChange
 */
export function filterBar(id, fields, ctx, onChange) {
  /** @type {(HTMLInputElement | HTMLSelectElement)[]} */
  const inputs = [];
  const form = h('form', { class: 'filters', id, autocomplete: 'off' });
  for (const f of fields) {
    const value = ctx.query.get(f.name) ?? '';
    /** @type {HTMLInputElement | HTMLSelectElement} */
    let input;
    if (f.options) {
      input = h(
        'select',
        { name: f.name, id: `${id}-${f.name}` },
        f.options.map(([v, text]) => h('option', { value: v }, [text])),
      );
      input.value = value;
      input.addEventListener('change', () => form.requestSubmit());
    } else {
      input = h('input', {
        name: f.name,
        id: `${id}-${f.name}`,
        placeholder: f.placeholder ?? '',
        spellcheck: 'false',
      });
      input.value = value;
    }
    inputs.push(input);
    form.append(h('label', {}, [h('span', { class: 'muted' }, [f.label]), input]));
  }
  form.append(h('button', { type: 'submit' }, ['Apply']));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    /** @type {Record<string, string | undefined>} */
    const q = {};
    for (const input of inputs) q[input.name] = input.value.trim() || undefined;
    ctx.setQuery(q);
    onChange();
  });
  return form;
}

/**
 * A line that says what the last action did (`data-state` ok or error).
 * @param {string} id
 */
export function statusLine(id) {
  const el = h('p', { class: 'muted action-status', id, 'aria-live': 'polite' });
  return {
    el,
    /** @param {string} text @param {boolean} [failed] */
    say(text, failed = false) {
      el.textContent = text;
      el.className = failed ? 'error action-status' : 'muted action-status';
      el.dataset.state = failed ? 'error' : 'ok';
    },
  };
}
