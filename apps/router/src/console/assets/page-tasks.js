// The console's tasks page: `/console/tasks` lists tasks by the filters in its URL (task-list.js),
// `/console/tasks/<id>` shows one task (task-view.js).
import { mountList } from './task-list.js';
import { mountView } from './task-view.js';

/**
 * @param {HTMLElement} root
 * @param {import('./pages.js').PageContext} ctx
 */
export function mount(root, ctx) {
  if (ctx.item === undefined) mountList(root, ctx);
  else mountView(root, ctx, ctx.item);
}
