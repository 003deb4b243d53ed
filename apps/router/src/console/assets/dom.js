/* global document, fetch */
// Small DOM and formatting helpers. Text always goes in through textContent, never innerHTML:
// agent ids, capabilities and error texts come from outside.

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Creates an HTML element with attributes and children (strings become text nodes).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | number | undefined>} [attrs]
 * @param {(Node | string | undefined)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, children = []) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
  for (const c of children) if (c !== undefined) el.append(c);
  return el;
}

/**
 * Creates an SVG element with attributes and children.
 * @param {string} tag
 * @param {Record<string, string | number | undefined>} [attrs]
 * @param {(Node | string | undefined)[]} [children]
 * @returns {SVGElement}
 */
export function s(tag, attrs = {}, children = []) {
  const el = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag));
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
  for (const c of children) if (c !== undefined) el.append(c);
  return el;
}

/**
 * The element with this id, typed; throws when the page lacks it.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
export function byId(id, type) {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`#${id} missing`);
  return el;
}

/**
 * A duration for people: 850 ms, 2.4 s, 3 min 5 s.
 * @param {number} ms
 */
export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const min = Math.floor(ms / 60_000);
  return `${min} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/**
 * Wall-clock time of an epoch-ms instant, HH:MM:SS.
 * @param {number} at
 */
export function fmtClock(at) {
  return new Date(at).toLocaleTimeString([], { hour12: false });
}

/**
 * GET a JSON resource of this origin.
 * @param {string} path
 * @returns {Promise<{ status: number, body: unknown }>}
 */
export async function getJson(path) {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  /** @type {unknown} */
  const body = await res.json().catch(() => ({}));
  return { status: res.status, body };
}

/**
 * A write to this origin's API with the console's session: the cookie, plus the header the
 * router asks of a write made with it (docs/SECURITY.md). Resolves with the status and the JSON
 * reply, `{}` when there is none.
 * @param {'POST' | 'PUT' | 'PATCH' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<{ status: number, body: unknown }>}
 */
export async function sendJson(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', 'x-reach-console': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  /** @type {unknown} */
  const reply = await res.json().catch(() => ({}));
  return { status: res.status, body: reply };
}

/**
 * The error text of an API reply (`{error, message}`), for a line on the page.
 * @param {{ status: number, body: unknown }} reply
 */
export function errorText(reply) {
  const err = /** @type {{ error?: string, message?: string }} */ (reply.body ?? {});
  return `${err.error ?? `HTTP ${reply.status}`}${err.message ? `: ${err.message}` : ''}`;
}
