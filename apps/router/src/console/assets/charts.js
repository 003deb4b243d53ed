// Charts drawn as inline SVG: no chart library, nothing to download.
import { fmtClock, fmtMs, s } from './dom.js';

/**
 * @typedef {{ stage: string, at: number, agent_id?: string, attempt?: number, error?: string, reason?: string }} TimelineEntry
 * @typedef {{ task_id: string, capability: string, agent_id: string, status: string, at: number,
 *   delivery_ms?: number, receipt_ms?: number, execution_ms?: number }} LatencyPoint
 */

/** Colours of stages and of the transitions that end in them. */
export const STAGE_COLORS = /** @type {Record<string, string>} */ ({
  accepted: '#64748b',
  sent: '#2563eb',
  received: '#0891b2',
  completed: '#16a34a',
  failed: '#dc2626',
  retried: '#d97706',
  retry_wait: '#d97706',
  queued: '#9333ea',
  dead: '#7f1d1d',
});
const color = (/** @type {string} */ stage) => STAGE_COLORS[stage] ?? '#6b7280';

/**
 * "Nice" axis ticks from 0 to max: 0, 5, 10 … or 0, 200, 400 …
 * @param {number} max
 * @param {number} count
 */
function ticks(max, count) {
  if (max <= 0) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => st >= raw) ?? raw;
  /** @type {number[]} */
  const out = [];
  for (let t = 0; t <= max + step * 0.001; t += step) out.push(t);
  return out;
}

/**
 * A task's timeline as a Gantt chart: one bar per step from one stage to the next, on a shared
 * time axis starting at the first stage, each labelled with its gap.
 * @param {TimelineEntry[]} timeline entries in time order
 * @returns {SVGElement}
 */
export function timelineChart(timeline) {
  const W = 640;
  const left = 150;
  const right = 70;
  const row = 30;
  const steps = timeline
    .slice(1)
    .map((e, i) => ({ from: /** @type {TimelineEntry} */ (timeline[i]), to: e }));
  const t0 = timeline[0]?.at ?? 0;
  const span = Math.max(1, (timeline.at(-1)?.at ?? t0) - t0);
  const axis = ticks(span, 5);
  const max = Math.max(span, axis.at(-1) ?? span);
  const x = (/** @type {number} */ ms) => left + ((W - left - right) * ms) / max;
  const H = 34 + Math.max(1, steps.length) * row + 30;
  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'timeline-chart',
    role: 'img',
    'aria-label': 'task timeline',
  });
  const axisY = H - 26;
  for (const t of axis) {
    svg.append(s('line', { x1: x(t), x2: x(t), y1: 24, y2: axisY, class: 'grid' }));
    svg.append(
      s('text', { x: x(t), y: axisY + 16, class: 'tick', 'text-anchor': 'middle' }, [fmtMs(t)]),
    );
  }
  // Stage markers along the top.
  timeline.forEach((e, i) => {
    const cx = x(e.at - t0);
    svg.append(
      s('circle', { cx, cy: 14, r: 5, fill: color(e.stage), 'data-stage': e.stage }, [
        s('title', {}, [`${e.stage} at ${fmtClock(e.at)}`]),
      ]),
    );
    if (i === 0 || i === timeline.length - 1) {
      svg.append(
        s(
          'text',
          { x: cx, y: 8, class: 'tick', 'text-anchor': i === 0 ? 'start' : 'end', dy: -1 },
          [e.stage],
        ),
      );
    }
  });
  steps.forEach(({ from, to }, i) => {
    const y = 28 + i * row;
    const gap = to.at - from.at;
    const x1 = x(from.at - t0);
    const w = Math.max(3, x(to.at - t0) - x1);
    const who = to.agent_id ? ` · ${to.agent_id}` : '';
    svg.append(
      s('text', { x: left - 10, y: y + 16, class: 'label', 'text-anchor': 'end' }, [
        `${from.stage} → ${to.stage}`,
      ]),
    );
    svg.append(
      s(
        'rect',
        {
          x: x1,
          y: y + 4,
          width: w,
          height: 18,
          rx: 4,
          fill: color(to.stage),
          class: 'bar',
          'data-stage': to.stage,
        },
        [
          s('title', {}, [
            `${from.stage} → ${to.stage}: ${fmtMs(gap)}${who}${to.attempt ? ` · attempt ${to.attempt}` : ''}`,
          ]),
        ],
      ),
    );
    // The gap's label goes inside a long bar, else after it.
    const inside = w > 70;
    svg.append(
      s(
        'text',
        {
          x: inside ? x1 + w - 6 : x1 + w + 6,
          y: y + 17,
          class: inside ? 'value inside' : 'value',
          'text-anchor': inside ? 'end' : 'start',
        },
        [`+${fmtMs(gap)}`],
      ),
    );
  });
  return svg;
}

/** The latency series, in legend order. */
export const LATENCY_SERIES = /** @type {const} */ ([
  { key: 'delivery_ms', label: 'delivery (accepted → sent)', color: '#2563eb' },
  { key: 'receipt_ms', label: 'receipt (sent → received)', color: '#0891b2' },
  { key: 'execution_ms', label: 'execution (received → result)', color: '#16a34a' },
]);

/**
 * Stage latencies of recent tasks over time: one line per stage on a log-scale y axis.
 * @param {LatencyPoint[]} points in time order
 * @param {number} now the server's clock, epoch ms
 * @param {(taskId: string) => void} onPick called when a point is clicked
 * @returns {SVGElement}
 */
export function latencyChart(points, now, onPick) {
  const W = 1100;
  const H = 260;
  const pad = { l: 64, r: 20, t: 34, b: 30 };
  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'latency-chart',
    role: 'img',
    'aria-label': 'stage latency over time',
  });
  const values = points.flatMap((p) =>
    LATENCY_SERIES.map((sr) => p[sr.key]).filter((v) => typeof v === 'number'),
  );
  // The right edge is now (the server's clock) and the chart spans at least a minute: a burst
  // of tasks stays a burst, and a quiet spell shows as empty space on the right.
  const t1 = Math.max(now, points.at(-1)?.at ?? now) + 1000;
  const t0 = Math.min(points[0]?.at ?? t1, t1 - 60_000);
  const hiExp = Math.max(1, Math.ceil(Math.log10(Math.max(10, ...values.map((v) => v + 1)))));
  const x = (/** @type {number} */ at) => pad.l + ((W - pad.l - pad.r) * (at - t0)) / (t1 - t0);
  const y = (/** @type {number} */ ms) =>
    H - pad.b - ((H - pad.t - pad.b) * Math.log10(Math.max(1, ms + 1))) / hiExp;
  for (let e = 0; e <= hiExp; e++) {
    const ms = 10 ** e - 1;
    svg.append(s('line', { x1: pad.l, x2: W - pad.r, y1: y(ms), y2: y(ms), class: 'grid' }));
    svg.append(
      s('text', { x: pad.l - 8, y: y(ms) + 4, class: 'tick', 'text-anchor': 'end' }, [
        e === 0 ? '0' : fmtMs(10 ** e),
      ]),
    );
  }
  for (let i = 0; i <= 4; i++) {
    const at = t0 + ((t1 - t0) * i) / 4;
    svg.append(
      s(
        'text',
        {
          x: x(at),
          y: H - 8,
          class: 'tick',
          'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle',
        },
        [fmtClock(at)],
      ),
    );
  }
  let lx = pad.l;
  for (const sr of LATENCY_SERIES) {
    svg.append(s('circle', { cx: lx + 5, cy: 14, r: 5, fill: sr.color }));
    svg.append(s('text', { x: lx + 15, y: 18, class: 'legend' }, [sr.label]));
    lx += 16 + sr.label.length * 7.2 + 24;
    const pts = points.flatMap((p) =>
      typeof p[sr.key] === 'number' ? [{ p, v: /** @type {number} */ (p[sr.key]) }] : [],
    );
    // A trend line: the median of each point and its neighbours, once there are enough points.
    if (pts.length >= 5) {
      const d = pts
        .map(({ p }, i) => {
          const near = pts
            .slice(Math.max(0, i - 2), i + 3)
            .map((q) => q.v)
            .sort((a, b) => a - b);
          return `${i ? 'L' : 'M'}${x(p.at).toFixed(1)},${y(near[Math.floor(near.length / 2)] ?? 0).toFixed(1)}`;
        })
        .join('');
      svg.append(s('path', { d, stroke: sr.color, fill: 'none', class: 'series' }));
    }
    for (const { p, v } of pts) {
      const dot = s(
        'circle',
        { cx: x(p.at), cy: y(v), r: 3.5, fill: sr.color, class: 'dot', 'data-task-id': p.task_id },
        [
          s('title', {}, [
            `${p.task_id} · ${p.capability} · ${p.agent_id}\n${sr.label}: ${fmtMs(v)}`,
          ]),
        ],
      );
      dot.addEventListener('click', () => onPick(p.task_id));
      svg.append(dot);
    }
  }
  if (points.length === 0) {
    svg.append(
      s('text', { x: W / 2, y: H / 2, class: 'empty', 'text-anchor': 'middle' }, [
        'No tasks sent by this router yet',
      ]),
    );
  }
  return svg;
}
