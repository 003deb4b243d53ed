// The waiting rooms (GET /v1/queues): per capability and tenant, the tasks waiting for a free
// slot, the oldest wait, the recent waits and each tenant's share of the tasks sent from the room.
import { fmtMs, getJson, h } from './dom.js';

/**
 * @typedef {{ tenant: string, queued: number, oldest_wait_ms: number, arrived: number, sent: number,
 *   wait_p50_ms: number, wait_p99_ms: number, share: number }} RoomTenant
 * @typedef {{ capability: string, queued: number, taking: number, held: number,
 *   oldest_wait_ms: number, tenants: RoomTenant[] }} Room
 * @typedef {{ generated_at: number, queues: Room[] }} QueuesReply
 */

/** @returns {Promise<QueuesReply>} */
export async function loadRooms() {
  const { status, body } = await getJson('/v1/queues');
  if (status !== 200) throw new Error(`waiting rooms: HTTP ${status}`);
  return /** @type {QueuesReply} */ (body);
}

/**
 * One row per capability and tenant of the rooms that ever held a task.
 * @param {QueuesReply} reply
 * @returns {HTMLElement}
 */
export function roomsTable(reply) {
  const rows = reply.queues.flatMap((q) =>
    q.tenants.map((t) =>
      h('tr', { 'data-capability': q.capability, 'data-tenant': t.tenant }, [
        h('td', {}, [q.capability]),
        h('td', {}, [t.tenant]),
        h('td', { class: 'num' }, [String(t.queued)]),
        h('td', { class: 'num' }, [t.queued > 0 ? fmtMs(t.oldest_wait_ms) : '–']),
        h('td', { class: 'num' }, [
          t.sent > 0 ? `${fmtMs(t.wait_p50_ms)} / ${fmtMs(t.wait_p99_ms)}` : '–',
        ]),
        h('td', { class: 'num' }, [`${Math.round(t.share * 100)} %`]),
        h('td', { class: 'num' }, [`${t.arrived} / ${t.sent}`]),
      ]),
    ),
  );
  if (rows.length === 0)
    return h('p', { class: 'muted' }, ['No task has waited for a slot: every one found an agent.']);
  const head = [
    'Capability',
    'Tenant',
    'Waiting',
    'Oldest',
    'Wait p50 / p99',
    'Share',
    'In / sent',
  ];
  return h('table', { class: 'figures', id: 'rooms' }, [
    h('thead', {}, [
      h(
        'tr',
        {},
        head.map((t) => h('th', {}, [t])),
      ),
    ]),
    h('tbody', {}, rows),
  ]);
}
