/* global document, history, location */
// The console's pages: a navigation bar, and the page the path names. Every page is the same
// HTML (`/console/<page>[/<item>]`); its filters live in the query string, so a view can be
// linked to and reloaded. The overview (`/console`) is console.js itself.
import { h } from './dom.js';

/**
 * @typedef {import('./login.js').Session} Session
 * @typedef {{
 *   session: Session,
 *   operator: boolean,
 *   item: string | undefined,
 *   query: URLSearchParams,
 *   setQuery: (q: Record<string, string | undefined>) => void,
 * }} PageContext
 * @typedef {{ mount: (root: HTMLElement, ctx: PageContext) => void | Promise<void> }} PageModule
 * @typedef {{ name: string, title: string, load: () => Promise<PageModule> }} PageEntry
 */

/** @type {PageEntry[]} */
export const PAGES = [
  { name: 'tasks', title: 'Tasks', load: () => import('./page-tasks.js') },
  { name: 'agents', title: 'Agents', load: () => import('./page-agents.js') },
  { name: 'capabilities', title: 'Capabilities', load: () => import('./page-capabilities.js') },
  { name: 'dead-letters', title: 'Dead letters', load: () => import('./page-dead-letters.js') },
  { name: 'schedules', title: 'Schedules', load: () => import('./page-schedules.js') },
  { name: 'tenants', title: 'Tenants & keys', load: () => import('./page-tenants.js') },
];

/**
 * The page and item a console path names: `/console/agents/a1` → agents, a1. Undefined for
 * the overview.
 * @param {string} path
 * @returns {{ page: PageEntry, item: string | undefined } | undefined}
 */
export function routeOf(path) {
  const m = /^\/console\/([a-z-]+)(?:\/(.+))?\/?$/.exec(path);
  const page = m && PAGES.find((p) => p.name === m[1]);
  if (!m || !page) return undefined;
  return { page, item: m[2] === undefined ? undefined : decodeURIComponent(m[2]) };
}

/**
 * Fills the navigation bar, marking the current page.
 * @param {string | undefined} current
 */
export function renderNav(current) {
  const nav = document.getElementById('nav');
  if (!nav) return;
  nav.replaceChildren(
    h('a', { href: '/console', 'aria-current': current ? undefined : 'page' }, ['Overview']),
    ...PAGES.map((p) =>
      h(
        'a',
        {
          href: `/console/${p.name}`,
          'data-page': p.name,
          'aria-current': p.name === current ? 'page' : undefined,
        },
        [p.title],
      ),
    ),
  );
}

/**
 * Shows the page the path names in place of the overview. Resolves false on the overview.
 * @param {Session} session
 * @returns {Promise<boolean>}
 */
export async function showPage(session) {
  const route = routeOf(location.pathname);
  renderNav(route?.page.name);
  if (!route) return false;
  const overview = document.getElementById('overview');
  const root = document.getElementById('page');
  if (!overview || !root) throw new Error('#overview or #page missing');
  overview.hidden = true;
  root.hidden = false;
  root.dataset.page = route.page.name;
  document.title = `${route.page.title} · Agent-Reach console`;
  /** @type {PageContext} */
  const ctx = {
    session,
    operator: session.role === 'operator',
    item: route.item,
    query: new URLSearchParams(location.search),
    setQuery(q) {
      const next = new URLSearchParams(location.search);
      for (const [k, v] of Object.entries(q)) {
        if (v === undefined || v === '') next.delete(k);
        else next.set(k, v);
      }
      ctx.query = next;
      const search = next.toString();
      history.replaceState(null, '', `${location.pathname}${search ? `?${search}` : ''}`);
    },
  };
  const mod = await route.page.load();
  await mod.mount(root, ctx);
  return true;
}
