// The console's agents page: the list (`/console/agents`, filters in the query string) or one
// agent (`/console/agents/<agent_id>`).
import { mountList } from './agent-list.js';
import { mountAgent } from './agent-view.js';

/**
 * @param {HTMLElement} root
 * @param {import('./pages.js').PageContext} ctx
 */
export async function mount(root, ctx) {
  if (ctx.item === undefined) await mountList(root, ctx);
  else await mountAgent(root, ctx, ctx.item);
}
