/**
 * The shipped dashboards and Flux files, checked for shape (this InfluxDB is 1.x and runs no
 * Flux): the JSON is what the generator writes from the query files, every panel runs a query
 * file unchanged, and every query reads the measurement and the fields its figure needs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHART_QUERIES, QUERIES_DIR, QUERY_NAMES, loadQuery } from '../queries.ts';
import { DASHBOARD_FILES, dashboardTexts } from './files.ts';
import { FLUX_CHARTS, FLUX_FILES } from './influxdb2.ts';

interface Target {
  refId: string;
  datasource?: { type: string };
  rawQuery?: boolean;
  query?: string;
  type?: string;
  expression?: string;
}
interface Panel {
  id: number;
  gridPos: Record<string, number>;
  targets: Target[];
}
interface GrafanaDashboard {
  __inputs: unknown[];
  panels: Panel[];
  templating: { list: Array<{ name: string }> };
}
interface Chart {
  kind: string;
  width: number;
  height: number;
  queries: Array<{ query: string }>;
}
interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { name?: string; charts?: Chart[] };
}
const grafana = JSON.parse(readFileSync(DASHBOARD_FILES.grafana, 'utf8')) as GrafanaDashboard;
const template = JSON.parse(readFileSync(DASHBOARD_FILES.influxdb2, 'utf8')) as Resource[];

/** What each Flux file must read: the field and the stage(s) of its figure. */
const FLUX_NEEDS: Record<(typeof FLUX_FILES)[number], string[]> = {
  'delivery-success': [
    'r._field == "task_id"',
    'r.stage == "completed"',
    'r.stage == "failed"',
    'r.stage == "dead"',
    'completed / outcomes',
  ],
  'completion-rate': ['r._field == "task_id"', 'r.stage == "completed"', 'rangeSeconds'],
  'receipt-latency': ['r._field == "latency_ms"', 'r.stage == "received"', 'mean()', 'q: 0.95'],
  'execution-time': [
    'r._field == "latency_ms"',
    'r._field == "duration_ms"',
    'r.stage == "completed"',
    'mean()',
    'q: 0.95',
  ],
  'stage-counts': ['r._field == "task_id"', '"stage"', 'count()'],
  'failure-codes': ['r._field == "task_id"', 'r.stage == "failed"', '"error_code"', 'count()'],
  'receipt-latency-over-time': [
    'r._field == "latency_ms"',
    'r.stage == "received"',
    'q: 0.95',
    'v.windowPeriod',
  ],
  'execution-time-over-time': [
    'r._field == "latency_ms"',
    'r.stage == "completed"',
    'q: 0.95',
    'v.windowPeriod',
  ],
  'completions-over-time': [
    'r._field == "task_id"',
    'r.stage == "completed"',
    'fn: count',
    'v.windowPeriod',
  ],
  'outcomes-over-time': [
    'r._field == "task_id"',
    'r.stage == "completed"',
    'r.stage == "dead"',
    'fn: count',
  ],
  'task-timeline': ['r.task_id == taskId', 'pivot('],
};

function balanced(text: string): boolean {
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (const ch of text.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
    if ('([{'.includes(ch)) stack.push(ch);
    else if (ch in pairs && stack.pop() !== pairs[ch]) return false;
  }
  return stack.length === 0;
}

describe('shipped files', () => {
  it('the dashboards are exactly what `npm run dashboards -w @agent-reach/analytics` writes', () => {
    const texts = dashboardTexts();
    expect(
      readFileSync(DASHBOARD_FILES.grafana, 'utf8'),
      'infra/grafana/agent-reach.json is stale: run the generator',
    ).toBe(texts.grafana);
    expect(
      readFileSync(DASHBOARD_FILES.influxdb2, 'utf8'),
      'dashboard-template.json is stale: run the generator',
    ).toBe(texts.influxdb2);
  });

  it('the queries folder holds exactly the known .influxql and .flux files', () => {
    const files = readdirSync(QUERIES_DIR).sort();
    const expected = [
      ...QUERY_NAMES.map((n) => `${n}.influxql`),
      ...FLUX_FILES.map((n) => `${n}.flux`),
    ].sort();
    expect(files).toEqual(expected);
  });
});

describe('Grafana dashboard', () => {
  const targets = grafana.panels.flatMap((p) => p.targets.map((t) => ({ panel: p, target: t })));
  const influxTargets = targets.filter(({ target }) => target.datasource?.type === 'influxdb');

  it('is an importable dashboard with an InfluxDB datasource input and unique panel ids', () => {
    expect(grafana.__inputs).toEqual([
      expect.objectContaining({ name: 'DS_INFLUXDB', type: 'datasource', pluginId: 'influxdb' }),
    ]);
    expect(grafana).toMatchObject({
      uid: expect.any(String),
      title: expect.any(String),
      schemaVersion: expect.any(Number),
    });
    const ids = grafana.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of grafana.panels)
      expect(p.gridPos).toMatchObject({ w: expect.any(Number), h: expect.any(Number) });
  });

  it('runs every query file unchanged, and every figure and chart file is on it', () => {
    const texts = new Map<string | undefined, string>(QUERY_NAMES.map((n) => [loadQuery(n), n]));
    for (const { target } of influxTargets) {
      expect(target.rawQuery).toBe(true);
      expect(texts.has(target.query), `target is not a query file: ${target.query}`).toBe(true);
    }
    const used = new Set(influxTargets.map(({ target }) => texts.get(target.query)));
    const shown = QUERY_NAMES.filter((n) => n !== 'task-timeline');
    expect([...used].sort()).toEqual([...shown].sort());
    for (const name of CHART_QUERIES)
      expect(loadQuery(name)).toContain('GROUP BY time($__interval)');
  });

  it('computes the success rate as completed / outcomes with a server-side expression', () => {
    const panel = grafana.panels.find((p) => p.targets.some((t) => t.type === 'math'));
    expect(panel?.targets.map((t) => t.refId)).toEqual(['A', 'B', 'C']);
    expect(panel?.targets[2]).toMatchObject({
      expression: '$A / $B',
      datasource: { type: '__expr__' },
    });
    expect(panel?.targets[0]?.query).toBe(loadQuery('success-completed'));
    expect(panel?.targets[1]?.query).toBe(loadQuery('success-outcomes'));
  });

  it('defines every variable its queries use', () => {
    const defined = new Set(grafana.templating.list.map((v) => v.name));
    const builtins = new Set(['timeFilter', '__interval', '__interval_ms', '__range_s']);
    for (const { target } of influxTargets) {
      for (const [, name] of (target.query ?? '').matchAll(/\$(\w+)/g)) {
        expect(defined.has(name!) || builtins.has(name!), `$${name} is not defined`).toBe(true);
      }
      expect(target.query).toContain('FROM "reach_task_events"');
    }
  });
});

describe('InfluxDB 2 template', () => {
  const dashboard = template.find((r) => r.kind === 'Dashboard');
  const charts = dashboard?.spec.charts ?? [];

  it('is a list of v2alpha1 resources: a label, the variables and the dashboard', () => {
    for (const r of template)
      expect(r).toMatchObject({
        apiVersion: 'influxdata.com/v2alpha1',
        metadata: { name: expect.stringMatching(/^[a-z0-9-]+$/) },
      });
    expect(template.map((r) => r.kind)).toEqual([
      'Label',
      'Variable',
      'Variable',
      'Variable',
      'Dashboard',
    ]);
    for (const c of charts)
      expect(c).toMatchObject({
        kind: expect.stringMatching(/^(Table|Xy)$/),
        width: expect.any(Number),
        height: expect.any(Number),
      });
  });

  it('shows every Flux chart file unchanged, one per cell', () => {
    const queries = charts.map((c) => c.queries[0]?.query);
    expect(queries).toEqual(FLUX_CHARTS.map((n) => loadQuery(n, 'flux')));
  });

  it('defines every v.<variable> the Flux files use', () => {
    const defined = new Set(template.filter((r) => r.kind === 'Variable').map((r) => r.spec.name));
    const builtins = new Set(['timeRangeStart', 'timeRangeStop', 'windowPeriod']);
    for (const name of FLUX_FILES) {
      for (const [, v] of loadQuery(name, 'flux').matchAll(/\bv\.(\w+)/g)) {
        expect(defined.has(v) || builtins.has(v!), `${name}.flux uses undefined v.${v}`).toBe(true);
      }
    }
  });
});

describe('docs/OBSERVABILITY.md', () => {
  const doc = readFileSync(new URL('../../../../docs/OBSERVABILITY.md', import.meta.url), 'utf8');
  it.each([
    'success-completed',
    'success-outcomes',
    'receipt-latency',
    'execution-time',
    'completion-rate',
    'stage-counts',
  ])('quotes %s.influxql exactly', (name) => expect(doc).toContain(loadQuery(name)));
  it.each(['delivery-success', 'receipt-latency', 'execution-time', 'completion-rate'])(
    'quotes %s.flux exactly',
    (name) => expect(doc).toContain(loadQuery(name, 'flux')),
  );
});

describe('Flux files', () => {
  it.each(FLUX_FILES)('%s reads reach_task_events and the fields of its figure', (name) => {
    const flux = loadQuery(name, 'flux');
    expect(flux).toContain('from(bucket: v.bucket)');
    expect(flux).toContain('r._measurement == "reach_task_events"');
    for (const needle of FLUX_NEEDS[name]) expect(flux).toContain(needle);
    if (name !== 'task-timeline')
      expect(flux).toContain('range(start: v.timeRangeStart, stop: v.timeRangeStop)');
    expect(balanced(flux), `${name}.flux has unbalanced brackets`).toBe(true);
  });
});
