// The console's capabilities page.
import { h } from './dom.js';

/**
 * @param {HTMLElement} root
 * @param {import('./pages.js').PageContext} _ctx
 */
export function mount(root, _ctx) {
  root.replaceChildren(h('section', { class: 'card wide' }, [h('h2', {}, ['capabilities'])]));
}
