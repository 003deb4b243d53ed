/**
 * Lifecycle order of a task's stages, for stages recorded in the same millisecond by different
 * processes (a receipt can be written before the `sent` record that precedes it).
 */
const STAGE_ORDER: Readonly<Record<string, number>> = {
  replayed: 0,
  accepted: 0,
  delayed: 0.5,
  sent: 1,
  received: 2,
  // Output is acked after the receipt and before the completion.
  streaming: 2.5,
  truncated: 2.6,
  completed: 3,
  failed: 3,
  retried: 4,
  dead: 5,
  probe: 6,
};

/** Orders stages by time, then by lifecycle order (unknown stages last): a sort comparator. */
export function byStageTime(
  a: { at: number; stage: string },
  b: { at: number; stage: string },
): number {
  return a.at - b.at || (STAGE_ORDER[a.stage] ?? 9) - (STAGE_ORDER[b.stage] ?? 9);
}
