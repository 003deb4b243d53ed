import type { WaitSample } from './figures.ts';

/**
 * What one run saw: when each tracked task was submitted and received, how many tasks each tenant
 * had received when, and every task's run in an agent. Agents and clients run in the bench
 * process, so one monotonic clock times both ends.
 */
export class Ledger {
  /** Tracked tasks (B's), by id. */
  readonly tracked = new Map<string, WaitSample>();
  /** Receipts: tenant and time, in order. */
  readonly receipts: { tenant: string; atMs: number }[] = [];
  /** Runs in an agent, start and end. */
  readonly runs: { startMs: number; endMs: number }[] = [];

  /** A tracked task was submitted (its scheduled time). */
  submitted(id: string, atMs: number): void {
    this.tracked.set(id, { submitMs: atMs });
  }

  /** The router answered a tracked task's submission. */
  answered(id: string, atMs: number): void {
    const t = this.tracked.get(id);
    if (t) t.answeredMs = atMs;
  }

  /** An agent received a task of `tenant` (`id` when tracked). */
  received(tenant: string, id: string, atMs: number): void {
    this.receipts.push({ tenant, atMs });
    const t = this.tracked.get(id);
    if (t && t.receivedMs === undefined) t.receivedMs = atMs;
  }

  /** An agent finished running a task. */
  ran(startMs: number, endMs: number): void {
    this.runs.push({ startMs, endMs });
  }

  /** True once every tracked task submitted before `beforeMs` was received. */
  allReceived(beforeMs: number): boolean {
    for (const t of this.tracked.values())
      if (t.submitMs < beforeMs && t.receivedMs === undefined) return false;
    return true;
  }

  /** Receipts per tenant within [fromMs, toMs). */
  receivedBy(tenants: readonly string[], fromMs: number, toMs: number): number[] {
    const counts = new Map(tenants.map((t) => [t, 0]));
    for (const r of this.receipts)
      if (r.atMs >= fromMs && r.atMs < toMs && counts.has(r.tenant))
        counts.set(r.tenant, (counts.get(r.tenant) ?? 0) + 1);
    return tenants.map((t) => counts.get(t) ?? 0);
  }
}
