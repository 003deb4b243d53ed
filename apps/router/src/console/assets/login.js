/* global document, fetch, location */
// The console's session: who it acts as (tenant and role, shown in the header), the login form
// when it has no key, and logging out. The key travels once, in the login POST; the router keeps
// it in an HttpOnly cookie that this script never sees.
import { byId, getJson, h } from './dom.js';

/** @typedef {{ key_id: string, tenant: string, role: string }} Session */

/** @param {Session} session */
function showWho(session) {
  const who = byId('who', HTMLDivElement);
  const open = session.key_id === 'open';
  who.replaceChildren(
    h('span', { class: 'muted' }, ['tenant ']),
    h('b', { id: 'tenant' }, [session.tenant]),
    h('span', { class: 'muted' }, [` · ${session.role}${open ? ' · auth off' : ''}`]),
  );
  if (!open) {
    const out = h('button', { type: 'button', class: 'link', id: 'logout' }, ['log out']);
    out.addEventListener('click', () => {
      void fetch('/v1/console/logout', { method: 'POST' }).then(() => location.reload());
    });
    who.append(' ', out);
  }
}

function showLogin() {
  const input = h('input', {
    id: 'login-key',
    name: 'key',
    type: 'password',
    placeholder: 'API key (operator or caller)',
    autocomplete: 'off',
    spellcheck: 'false',
    required: '',
  });
  const message = h('p', { class: 'muted', id: 'login-message' }, [
    'This router requires an API key. The key is kept in an HttpOnly cookie for this site.',
  ]);
  const form = h('form', { id: 'login-form', class: 'lookup' }, [
    input,
    h('button', { type: 'submit' }, ['Log in']),
  ]);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      const res = await fetch('/v1/console/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ key: input.value }),
      });
      if (res.ok) {
        location.reload();
        return;
      }
      /** @type {unknown} */
      const reply = await res.json().catch(() => ({}));
      const err = /** @type {{ error?: string, message?: string }} */ (reply);
      message.className = 'error';
      message.textContent = `${err.error ?? `HTTP ${res.status}`}: ${err.message ?? ''}`;
    })();
  });
  const main = document.getElementById('overview');
  main?.replaceChildren(
    h('section', { class: 'card wide', id: 'login' }, [
      h('div', { class: 'card-head' }, [h('h2', {}, ['Log in'])]),
      form,
      message,
    ]),
  );
}

/**
 * Resolves with the session the console acts as, or undefined after showing the login form.
 * @returns {Promise<Session | undefined>}
 */
export async function startSession() {
  const { status, body } = await getJson('/v1/console/session');
  if (status === 200) {
    const session = /** @type {Session} */ (body);
    showWho(session);
    return session;
  }
  if (status === 401) {
    showLogin();
    return undefined;
  }
  throw new Error(`session: HTTP ${status}`);
}
