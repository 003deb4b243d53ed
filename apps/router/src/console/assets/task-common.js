/* global setTimeout */
// What the tasks page's list and task view share: the statuses, who may act on a task, links.
import { fmtClock, h } from './dom.js';

/**
 * @typedef {{ task_id: string, tenant: string, status: string, capability: string, agent_id: string,
 *   attempts: number, created_at: number, ended_at?: number, duration_ms?: number,
 *   error_code?: string, parent_task_id?: string, archived?: boolean }} TaskSummary
 * @typedef {{ items: TaskSummary[], next_cursor: string | null, source: string }} SearchPage
 */

/** Every task status, in lifecycle order (TASK_STATUSES in packages/protocol's states.ts). */
export const STATUSES = [
  'accepted',
  'delayed',
  'queued',
  'sent',
  'received',
  'completed',
  'failed',
  'retry_wait',
  'dead',
  'cancelled',
];

/** Statuses after which nothing more happens to a task (FINAL_TASK_STATUSES). */
export const FINAL = new Set(['completed', 'dead', 'cancelled']);

/**
 * Roles whose keys may cancel a task (POST /v1/tasks/:id/cancel) and replay a dead letter
 * (POST /v1/dlq/:id/replay): both routes take the auth hook's default roles. A caller acts on its
 * own tenant's tasks only; the API answers 404 for another's.
 */
export const ACTION_ROLES = new Set(['caller', 'operator', 'agent']);

/** How often a page with unfinished tasks reads them again. */
export const LIVE_EVERY_MS = 2000;

/** @param {string} taskId */
export const taskHref = (taskId) => `/console/tasks/${encodeURIComponent(taskId)}`;

/**
 * A link to a task's view.
 * @param {string} taskId
 * @param {Record<string, string>} [attrs]
 */
export const taskLink = (taskId, attrs = {}) =>
  h('a', { href: taskHref(taskId), class: 'mono', ...attrs }, [taskId]);

/** @param {string} status */
export const statusPill = (status) => h('span', { class: `pill ${status}` }, [status]);

/**
 * A moment for people: the time of day when it is today, else the date and time.
 * @param {number} at epoch ms
 */
export function fmtWhen(at) {
  const d = new Date(at);
  if (d.toDateString() === new Date().toDateString()) return fmtClock(at);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${fmtClock(at)}`;
}

/**
 * Runs `fn` again `ms` after each run while it resolves true; never two at once.
 * @param {() => Promise<boolean>} fn resolves whether to go on
 * @param {number} ms
 */
export function whileLive(fn, ms) {
  const tick = () => {
    fn().then(
      (again) => {
        if (again) setTimeout(tick, ms);
      },
      // A failed read is tried again: the page shows what it last read.
      () => setTimeout(tick, ms),
    );
  };
  setTimeout(tick, ms);
}
