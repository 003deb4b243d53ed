import { keySlot } from '@agent-reach/protocol';

export { keySlot };

/**
 * `items` grouped by the slot of `keyOf(item)`, groups in the order their first item came, items
 * in their own order: one group per pipeline, MULTI or blocking read on a Cluster.
 */
export function groupBySlot<T>(items: Iterable<T>, keyOf: (item: T) => string): T[][] {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const slot = keySlot(keyOf(item));
    const group = groups.get(slot);
    if (group) group.push(item);
    else groups.set(slot, [item]);
  }
  return [...groups.values()];
}
