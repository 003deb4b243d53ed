// Charts of a series over time (GET /v1/stats/series), drawn as inline SVG like charts.js: stacked
// bars for counts, lines with dots for times, and a sparkline for a table cell. Every step has a
// hover band whose title lists its values.
import { fmtClock, fmtMs, s } from './dom.js';

/**
 * @typedef {{ key: string, label: string, color: string, values: (number | null)[] }} Series
 * @typedef {{ times: number[], stepMs: number, series: Series[], unit: 'count' | 'ms', empty: string,
 *   label: string }} ChartInput
 */

const W = 640;
const H = 230;
const PAD = { l: 56, r: 14, t: 30, b: 28 };

/**
 * "Nice" axis ticks from 0 to at least max: 0, 5, 10 … or 0, 200, 400 …
 * @param {number} max
 * @param {number} count
 */
function ticks(max, count) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => st >= raw) ?? raw;
  /** @type {number[]} */
  const out = [];
  for (let t = 0; t < max + step; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

/**
 * A step's start for an axis or a title: seconds shown only when steps are shorter than a minute.
 * @param {number} at
 * @param {number} stepMs
 */
function when(at, stepMs) {
  const clock = fmtClock(at);
  return stepMs < 60_000 ? clock : clock.slice(0, -3);
}

/**
 * @param {number} v
 * @param {'count' | 'ms'} unit
 */
const fmt = (v, unit) =>
  unit === 'count'
    ? String(Math.round(v * 100) / 100)
    : v < 1000
      ? `${Number(v.toPrecision(3))} ms`
      : fmtMs(v);

/**
 * The frame both charts share: grid, y ticks, time labels, legend, and a hover band per step.
 * @param {ChartInput} input
 * @param {number} max the y axis' top value
 */
function frame(input, max) {
  const { times, stepMs, series, unit } = input;
  const n = Math.max(1, times.length);
  const band = (W - PAD.l - PAD.r) / n;
  const axis = ticks(max, 4);
  const top = axis.at(-1) ?? 1;
  const y = (/** @type {number} */ v) => H - PAD.b - ((H - PAD.t - PAD.b) * v) / top;
  const x = (/** @type {number} */ i) => PAD.l + i * band;
  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'series-chart',
    role: 'img',
    'aria-label': input.label,
  });
  for (const t of axis) {
    svg.append(s('line', { x1: PAD.l, x2: W - PAD.r, y1: y(t), y2: y(t), class: 'grid' }));
    svg.append(
      s('text', { x: PAD.l - 8, y: y(t) + 4, class: 'tick', 'text-anchor': 'end' }, [fmt(t, unit)]),
    );
  }
  // About six time labels, at whole steps.
  const every = Math.max(1, Math.ceil(n / 6));
  for (let i = 0; i < times.length; i += every) {
    svg.append(
      s('text', { x: x(i) + band / 2, y: H - 8, class: 'tick', 'text-anchor': 'middle' }, [
        when(/** @type {number} */ (times[i]), stepMs),
      ]),
    );
  }
  let lx = PAD.l;
  for (const sr of series) {
    svg.append(s('rect', { x: lx, y: 8, width: 10, height: 10, rx: 2, fill: sr.color }));
    svg.append(s('text', { x: lx + 15, y: 17, class: 'legend' }, [sr.label]));
    lx += 15 + sr.label.length * 7 + 20;
  }
  // Beneath the marks: a mark's own title wins where it is drawn.
  const hovers = times.map((at, i) =>
    s('rect', { x: x(i), y: PAD.t, width: band, height: H - PAD.t - PAD.b, class: 'hover-band' }, [
      s('title', {}, [
        [
          `${when(at, stepMs)} – ${when(at + stepMs, stepMs)}`,
          ...series.map((sr) => {
            const v = sr.values[i];
            return `${sr.label}: ${v === null || v === undefined ? '–' : fmt(v, unit)}`;
          }),
        ].join('\n'),
      ]),
    ]),
  );
  svg.append(...hovers);
  return { svg, y, x, band };
}

/** @param {ChartInput} input */
function hasValues(input) {
  return input.series.some((sr) => sr.values.some((v) => v !== null && v > 0));
}

/**
 * @param {SVGElement} svg
 * @param {string} text
 */
function emptyNote(svg, text) {
  svg.append(
    s('text', { x: (W + PAD.l) / 2, y: H / 2, class: 'empty', 'text-anchor': 'middle' }, [text]),
  );
}

/**
 * Counts per step as stacked bars, the first series at the bottom. Each non-zero value is one
 * `rect.mark` with `data-series` and a title.
 * @param {ChartInput} input
 * @returns {SVGElement}
 */
export function stackedBars(input) {
  const totals = input.times.map((_, i) =>
    input.series.reduce((sum, sr) => sum + (sr.values[i] ?? 0), 0),
  );
  const { svg, y, x, band } = frame(input, Math.max(0, ...totals));
  const gap = Math.min(2, band * 0.15);
  input.times.forEach((at, i) => {
    let base = 0;
    for (const sr of input.series) {
      const v = sr.values[i] ?? 0;
      if (v <= 0) continue;
      svg.append(
        s(
          'rect',
          {
            x: x(i) + gap / 2,
            y: y(base + v),
            width: Math.max(1, band - gap),
            height: Math.max(1, y(base) - y(base + v)),
            fill: sr.color,
            class: 'mark',
            'data-series': sr.key,
            'data-at': at,
          },
          [s('title', {}, [`${when(at, input.stepMs)} · ${sr.label}: ${fmt(v, input.unit)}`])],
        ),
      );
      base += v;
    }
  });
  if (!hasValues(input)) emptyNote(svg, input.empty);
  return svg;
}

/**
 * Values per step as lines with a dot per value (`circle.mark`); a step without a value breaks
 * the line.
 * @param {ChartInput} input
 * @returns {SVGElement}
 */
export function lines(input) {
  const values = input.series.flatMap((sr) => sr.values.filter((v) => v !== null));
  const { svg, y, x, band } = frame(input, Math.max(0, .../** @type {number[]} */ (values)));
  for (const sr of input.series) {
    let d = '';
    let drawing = false;
    sr.values.forEach((v, i) => {
      if (v === null) {
        drawing = false;
        return;
      }
      d += `${drawing ? 'L' : 'M'}${(x(i) + band / 2).toFixed(1)},${y(v).toFixed(1)}`;
      drawing = true;
    });
    if (d) svg.append(s('path', { d, stroke: sr.color, fill: 'none', class: 'line' }));
    sr.values.forEach((v, i) => {
      if (v === null) return;
      const at = /** @type {number} */ (input.times[i]);
      svg.append(
        s(
          'circle',
          {
            cx: x(i) + band / 2,
            cy: y(v),
            r: 3,
            fill: sr.color,
            class: 'mark',
            'data-series': sr.key,
            'data-at': at,
          },
          [s('title', {}, [`${when(at, input.stepMs)} · ${sr.label}: ${fmt(v, input.unit)}`])],
        ),
      );
    });
  }
  if (!hasValues(input)) emptyNote(svg, input.empty);
  return svg;
}

/**
 * A small line of counts for a table cell, scaled to its own largest value.
 * @param {number[]} values oldest first
 * @param {string} title
 * @returns {SVGElement}
 */
export function sparkline(values, title) {
  const w = 120;
  const h = 26;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? w / (values.length - 1) : w;
  const pts = values
    .map((v, i) => `${(i * step).toFixed(1)},${(h - 2 - ((h - 4) * v) / max).toFixed(1)}`)
    .join(' ');
  return s('svg', { viewBox: `0 0 ${w} ${h}`, class: 'spark', role: 'img', 'aria-label': title }, [
    s('title', {}, [title]),
    s('line', { x1: 0, x2: w, y1: h - 2, y2: h - 2, class: 'grid' }),
    s('polyline', { points: pts, class: 'spark-line', fill: 'none' }),
  ]);
}
