/**
 * How many submissions went to a waiting room instead of straight to an agent: the `queued`
 * stage of the routers' `reach_task_events_total` counter (docs/OPERATIONS.md), read from their
 * `/metrics` around each run. A run that finds every agent full sends one submission to the
 * room, and every later one of the capability waits behind it until the room is empty
 * (docs/ROUTING.md, Waiting room): a count in the thousands says why a run fell behind.
 */

const QUEUED_LINE = /^reach_task_events_total\{([^}]*)\}\s+(\S+)/;

/** The `queued` count in one router's metrics text; 0 while no task has waited. */
export function queuedInMetrics(text: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = QUEUED_LINE.exec(line);
    if (m && /(^|,)stage="queued"(,|$)/.test(m[1] ?? '')) total += Number(m[2]);
  }
  return total;
}

/** The sum over `urls` (each router's base URL); undefined when one does not answer. */
export async function roomEntries(
  urls: readonly string[],
  headers: Record<string, string> = {},
): Promise<number | undefined> {
  let total = 0;
  for (const url of urls) {
    try {
      const res = await fetch(`${url}/metrics`, { headers, signal: AbortSignal.timeout(2000) });
      const text = await res.text();
      if (res.status !== 200) return undefined;
      total += queuedInMetrics(text);
    } catch {
      return undefined;
    }
  }
  return total;
}
