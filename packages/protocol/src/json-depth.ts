/**
 * How deep JSON may nest in what Agent-Reach takes in: a payload, an agent's `meta`, a result.
 * `JSON.stringify` recurses and throws past a few thousand levels, so a value nested that deep
 * would fail a request with a 500 long after it was accepted (docs/errors.md JSON_TOO_DEEP).
 */

/** Most levels of arrays and objects in one JSON value (`{}` is one level, `[[1]]` two). */
export const MAX_JSON_DEPTH = 64;

/**
 * Most levels a request body that carries several values (a batch) may nest: deeper, it is
 * refused whole before it is parsed; within it, each item's value is held to MAX_JSON_DEPTH.
 */
export const MAX_BODY_JSON_DEPTH = 256;

/**
 * The deepest nesting of arrays and objects in JSON text, counting no further than `stopAbove`
 * (it returns `stopAbove + 1` as soon as that is passed, without reading the rest). Brackets
 * inside strings do not count, and strings are skipped with `indexOf` rather than character by
 * character. The text need not be valid JSON: the parse that follows says so.
 */
export function jsonTextDepth(text: string, stopAbove = Number.MAX_SAFE_INTEGER): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // On to the closing quote: one not preceded by an odd run of backslashes.
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return max;
        let b = i - 1;
        while (text.charCodeAt(b) === 0x5c) b--;
        if ((i - 1 - b) % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) {
        max = depth;
        if (max > stopAbove) return max;
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return max;
}

/**
 * Whether a parsed value nests deeper than `max` levels. Walks without recursion (no stack to
 * overflow) and stops at the first value past the limit.
 */
export function jsonDepthExceeds(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [object, number][] = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children as unknown[])
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
