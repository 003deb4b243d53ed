// A task's children as a tree: task search by parent_task_id, two levels down.
import { errorText, getJson, h } from './dom.js';
import { statusPill, taskLink } from './task-common.js';

/**
 * @typedef {import('./task-common.js').TaskSummary} TaskSummary
 * @typedef {import('./task-common.js').SearchPage} SearchPage
 */

/** Levels of children listed under the task. */
const DEPTH = 2;
/** Children of one task listed; the rest are a link to the list. */
const PER_TASK = 50;
/** Children of the first level whose own children are looked up (one search each). */
const EXPANDED = 20;

/**
 * The list's address for the children of `parentId`.
 * @param {string} parentId
 * @param {number} since
 */
const listHref = (parentId, since) =>
  `/console/tasks?${new URLSearchParams({ parent_task_id: parentId, since: String(since) }).toString()}`;

/**
 * One page of the children of `parentId`, created at or after `since` (its parent's creation:
 * a child is never older, and the search reaches into the archive when that is past retention).
 * @param {string} parentId
 * @param {number} since
 * @returns {Promise<{ page: SearchPage } | { error: string }>}
 */
async function childrenOf(parentId, since) {
  const qs = new URLSearchParams({
    parent_task_id: parentId,
    since: String(since),
    limit: String(PER_TASK),
  });
  const reply = await getJson(`/v1/tasks?${qs.toString()}`);
  if (reply.status !== 200) return { error: errorText(reply) };
  return { page: /** @type {SearchPage} */ (reply.body) };
}

/**
 * The children of `parentId` as a list, with theirs below them down to DEPTH.
 * @param {string} parentId
 * @param {number} since
 * @param {number} depth 1 for the task's own children
 * @returns {Promise<HTMLElement | undefined>} undefined when it has none
 */
async function level(parentId, since, depth) {
  const found = await childrenOf(parentId, since);
  if ('error' in found) return h('p', { class: 'error' }, [found.error]);
  const { items, next_cursor: more } = found.page;
  if (items.length === 0) return undefined;
  const below = await Promise.all(
    items.map((c, i) =>
      depth < DEPTH && i < EXPANDED
        ? level(c.task_id, c.created_at, depth + 1)
        : Promise.resolve(undefined),
    ),
  );
  return h('ul', { class: 'tree', 'data-depth': depth }, [
    ...items.map((c, i) =>
      h('li', { 'data-task-id': c.task_id, 'data-status': c.status }, [
        taskLink(c.task_id),
        ' ',
        statusPill(c.status),
        ' ',
        h('span', { class: 'chip' }, [c.capability]),
        c.agent_id ? h('span', { class: 'muted' }, [` on ${c.agent_id}`]) : undefined,
        below[i],
      ]),
    ),
    more
      ? h('li', { class: 'more' }, [h('a', { href: listHref(parentId, since) }, ['more…'])])
      : undefined,
  ]);
}

/**
 * The task's children as a tree; when the search does not answer, the ids its view lists.
 * @param {{ task_id: string, created_at: number, children?: string[] }} task
 * @returns {Promise<HTMLElement>}
 */
export async function childrenTree(task) {
  const tree = await level(task.task_id, task.created_at, 1);
  if (tree === undefined)
    return h('p', { class: 'muted', id: 'task-children-none' }, ['No children.']);
  if (tree.tagName === 'P' && task.children?.length) {
    // The search was refused (an archive outage, say): the ids the task's view lists.
    return h('div', {}, [
      tree,
      h(
        'ul',
        { class: 'tree' },
        task.children.map((id) => h('li', { 'data-task-id': id }, [taskLink(id)])),
      ),
    ]);
  }
  return h('div', {}, [
    tree,
    h('p', { class: 'muted' }, [
      h('a', { href: listHref(task.task_id, task.created_at) }, ['the children in the list']),
    ]),
  ]);
}
