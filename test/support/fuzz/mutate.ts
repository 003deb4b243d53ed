/**
 * Mutations of a JSON value at one of its places (property values and array items, the root
 * included): replace a value, drop a property, add one. Each returns a deep copy; `i` picks the
 * place modulo their number, so any generated integer names one.
 */

/** Every place a value sits in `root` (property values and array items), root first. */
function slots(root: unknown): { parent: unknown; key: string | number }[] {
  const out: { parent: unknown; key: string | number }[] = [];
  const walk = (node: unknown, depth: number) => {
    if (depth > 6 || node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      out.push({ parent: node, key: Array.isArray(node) ? Number(k) : k });
      walk(v, depth + 1);
    }
  };
  walk(root, 0);
  return out;
}

/** A deep copy of `root` with the value at slot `i` (modulo; the root when none) replaced. */
export function replaceAt(root: unknown, i: number, value: unknown): unknown {
  const copy = structuredClone(root);
  const all = slots(copy);
  const slot = all[i % (all.length + 1)];
  if (!slot) return value;
  (slot.parent as Record<string | number, unknown>)[slot.key] = value;
  return copy;
}

/** A deep copy of `root` without one of its properties. */
export function dropOne(root: unknown, i: number): unknown {
  const copy = structuredClone(root);
  const all = slots(copy).filter((s) => !Array.isArray(s.parent));
  const slot = all[i % Math.max(1, all.length)];
  if (slot) delete (slot.parent as Record<string, unknown>)[slot.key as string];
  return copy;
}

/** A deep copy of `root` with a property `key` added to one of its objects. */
export function addField(root: unknown, i: number, key: string, value: unknown): unknown {
  const copy = structuredClone(root);
  const objects = [
    copy,
    ...slots(copy).map((s) => (s.parent as Record<string | number, unknown>)[s.key]),
  ].filter(
    (v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v),
  );
  const target = objects[i % Math.max(1, objects.length)];
  if (!target) return copy;
  Object.defineProperty(target, key === '' ? 'extra' : key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}
