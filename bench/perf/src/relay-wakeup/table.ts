/** One line of the wake-up lab's table. */
export interface Row {
  leg: string;
  /** `none` is the floor: inboxes and groups present, no relay, no wake-up. */
  candidate: string;
  /** Relay connections open on the masters (CLIENT LIST). */
  connections: number;
  /** Redis CPU with no traffic, summed over masters, % of one core. */
  idleCpuPct: number;
  wakeP50Ms?: number;
  wakeP99Ms?: number;
  wakeMaxMs?: number;
  /** Entries read of those sent, e.g. `200/200`. */
  woken?: string;
  /** Redis CPU per delivery: absolute for `none`, above `none` for the others; NaN when not measured. */
  cpuUsPerDelivery: number;
}

const HEAD = [
  'leg',
  'candidate',
  'relay conns',
  'idle CPU %core',
  'wake p50 ms',
  'wake p99 ms',
  'wake max ms',
  'woken',
  'CPU µs/delivery',
] as const;

function num(v: number | undefined, digits: number): string {
  return v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits);
}

/** The rows as a Markdown table, numbers right-aligned. */
export function formatTable(rows: readonly Row[]): string {
  const cells = rows.map((r) => [
    r.leg,
    r.candidate,
    String(r.connections),
    num(r.idleCpuPct, 2),
    num(r.wakeP50Ms, 2),
    num(r.wakeP99Ms, 2),
    num(r.wakeMaxMs, 2),
    r.woken ?? '—',
    r.candidate === 'none' ? `${num(r.cpuUsPerDelivery, 1)} (base)` : num(r.cpuUsPerDelivery, 1),
  ]);
  const widths = HEAD.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]) =>
    `| ${c.map((v, i) => (i < 2 ? v.padEnd(widths[i] ?? 0) : v.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i < 2 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(HEAD), rule, ...cells.map(line)].join('\n');
}
