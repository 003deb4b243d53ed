/** A cell: text, or nothing (shown as `-`). */
export type Cell = string | number | null | undefined;

/**
 * A plain-text table: a header row, then one row per item, columns padded to their widest cell
 * and separated by two spaces. Numbers are right-aligned.
 */
export function table(header: readonly string[], rows: readonly Cell[][]): string {
  const text = (c: Cell) => (c === null || c === undefined || c === '' ? '-' : String(c));
  const cells = [header.map(text), ...rows.map((r) => header.map((_, i) => text(r[i])))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const numeric = header.map(
    (_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number' || r[i] == null),
  );
  return cells
    .map((r) =>
      r
        .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Milliseconds for people: `850 µs`, `12 ms`, `3.4 ms`, `1.25 s`, `2 min 5 s`; `-` for nothing. */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  if (value === 0) return '0 ms';
  if (value < 1) return `${Math.round(value * 1000)} µs`;
  if (value < 10) return `${value.toFixed(1).replace(/\.0$/, '')} ms`;
  if (value < 1000) return `${Math.round(value)} ms`;
  if (value < 60_000) return `${(value / 1000).toFixed(2)} s`;
  const s = Math.round(value / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** A gap between stages: `+12 ms`; the first stage has none. */
export function gap(value: number, first: boolean): string {
  return first ? '' : `+${ms(value)}`;
}

/** A share as a percentage with one decimal: `98.5 %`; `-` for nothing. */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : `${(value * 100).toFixed(1)} %`;
}

/** Epoch milliseconds as an ISO 8601 UTC time with milliseconds. */
export function time(epochMs: number): string {
  return Number.isFinite(epochMs) && epochMs > 0 ? new Date(epochMs).toISOString() : '-';
}

/** A rate with up to three significant decimals: `0.8`, `12.4`, `0.013`. */
export function rate(value: number): string {
  if (value === 0) return '0';
  return value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(1) : value.toPrecision(2);
}

/** A value as compact JSON on one line (for results and errors inside human output). */
export function inline(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? '-' : text;
}
