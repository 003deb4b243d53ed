import { loadQuery, type QueryName } from '../queries.ts';

/** The Grafana datasource every panel uses: an input chosen when the dashboard is imported. */
const DS = { type: 'influxdb', uid: '${DS_INFLUXDB}' } as const;

type Json = Record<string, unknown>;

interface Grid {
  x: number;
  y: number;
  w: number;
  h: number;
}

function target(
  refId: string,
  name: QueryName,
  format: 'table' | 'time_series',
  hide = false,
): Json {
  return {
    refId,
    datasource: DS,
    rawQuery: true,
    resultFormat: format,
    query: loadQuery(name),
    ...(hide ? { hide: true } : {}),
  };
}

function panel(
  id: number,
  type: string,
  title: string,
  gridPos: Grid,
  targets: Json[],
  rest: Json,
): Json {
  return { id, type, title, gridPos, datasource: DS, targets, ...rest };
}

const tableOptions = {
  showHeader: true,
  cellHeight: 'sm',
  footer: { show: false, reducer: ['sum'], fields: '' },
};

/** Hides the window-start time column of a window table and names the group column. */
function tableTransform(renames: Record<string, string>): Json[] {
  return [
    { id: 'organize', options: { excludeByName: { Time: true }, renameByName: { ...renames } } },
  ];
}

function msField(decimals = 1): Json {
  return { defaults: { unit: 'ms', decimals }, overrides: [] };
}

function timeseries(
  id: number,
  title: string,
  gridPos: Grid,
  name: QueryName,
  unit: string,
  stack = false,
): Json {
  return panel(id, 'timeseries', title, gridPos, [target('A', name, 'time_series')], {
    fieldConfig: {
      defaults: {
        unit,
        custom: {
          drawStyle: stack ? 'bars' : 'line',
          fillOpacity: stack ? 80 : 10,
          stacking: { mode: stack ? 'normal' : 'none', group: 'A' },
          spanNulls: true,
        },
      },
      overrides: [],
    },
    options: {
      legend: { displayMode: 'table', placement: 'right', calcs: ['mean', 'max'] },
      tooltip: { mode: 'multi', sort: 'desc' },
    },
  });
}

/**
 * The Grafana dashboard (InfluxDB datasource, InfluxQL): the four figures per `$group` over the
 * dashboard's time range, and the same figures over time. Every target's text is a query file
 * from infra/influxdb/queries, unchanged.
 */
export function grafanaDashboard(): Json {
  const panels: Json[] = [
    panel(
      1,
      'bargauge',
      'Delivery success rate — completed / (completed + failed + dead)',
      { x: 0, y: 0, w: 12, h: 8 },
      [
        target('A', 'success-completed', 'time_series', true),
        target('B', 'success-outcomes', 'time_series', true),
        {
          refId: 'C',
          datasource: { type: '__expr__', uid: '__expr__' },
          type: 'math',
          expression: '$A / $B',
        },
      ],
      {
        fieldConfig: {
          defaults: {
            unit: 'percentunit',
            min: 0,
            max: 1,
            decimals: 1,
            thresholds: {
              mode: 'absolute',
              steps: [
                { color: 'red', value: null },
                { color: 'orange', value: 0.95 },
                { color: 'green', value: 0.99 },
              ],
            },
          },
          overrides: [],
        },
        options: {
          orientation: 'horizontal',
          displayMode: 'gradient',
          reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        },
      },
    ),
    panel(
      2,
      'table',
      'Completion rate (completed over the range, per second)',
      { x: 12, y: 0, w: 12, h: 8 },
      [target('A', 'completion-rate', 'table')],
      {
        fieldConfig: {
          defaults: { unit: 'none', decimals: 0 },
          overrides: [
            {
              matcher: { id: 'byName', options: 'per_second' },
              properties: [
                { id: 'unit', value: 'reqps' },
                { id: 'decimals', value: 4 },
              ],
            },
          ],
        },
        options: tableOptions,
        transformations: tableTransform({ completed: 'completed', per_second: 'per second' }),
      },
    ),
    panel(
      3,
      'table',
      'Receipt latency (sent → received)',
      { x: 0, y: 8, w: 8, h: 8 },
      [target('A', 'receipt-latency', 'table')],
      {
        fieldConfig: msField(),
        options: tableOptions,
        transformations: tableTransform({ mean: 'mean (ms)', p95: 'p95 (ms)', count: 'samples' }),
      },
    ),
    panel(
      4,
      'table',
      'Execution time (received → completed)',
      { x: 8, y: 8, w: 10, h: 8 },
      [target('A', 'execution-time', 'table')],
      {
        fieldConfig: msField(),
        options: tableOptions,
        transformations: tableTransform({
          mean: 'mean (ms)',
          p95: 'p95 (ms)',
          count: 'samples',
          handler_mean: 'handler mean (ms)',
          handler_p95: 'handler p95 (ms)',
        }),
      },
    ),
    panel(
      5,
      'table',
      'Events by stage',
      { x: 18, y: 8, w: 6, h: 8 },
      [target('A', 'stage-counts', 'table')],
      {
        fieldConfig: { defaults: { unit: 'none', decimals: 0 }, overrides: [] },
        options: tableOptions,
        transformations: tableTransform({ count: 'points' }),
      },
    ),
    panel(
      10,
      'table',
      'Failures by error code',
      { x: 0, y: 34, w: 12, h: 8 },
      [target('A', 'failure-codes', 'table')],
      {
        fieldConfig: { defaults: { unit: 'none', decimals: 0 }, overrides: [] },
        options: tableOptions,
        transformations: tableTransform({ count: 'failed attempts' }),
      },
    ),
    timeseries(
      6,
      'Receipt latency over time (mean, p95)',
      { x: 0, y: 16, w: 12, h: 9 },
      'receipt-latency-over-time',
      'ms',
    ),
    timeseries(
      7,
      'Execution time over time (mean, p95)',
      { x: 12, y: 16, w: 12, h: 9 },
      'execution-time-over-time',
      'ms',
    ),
    timeseries(
      8,
      'Completions per minute',
      { x: 0, y: 25, w: 12, h: 9 },
      'completions-over-time',
      'none',
    ),
    timeseries(
      9,
      'Delivery outcomes (completed, failed, dead)',
      { x: 12, y: 25, w: 12, h: 9 },
      'outcomes-over-time',
      'none',
      true,
    ),
  ];
  return {
    __inputs: [
      {
        name: 'DS_INFLUXDB',
        label: 'InfluxDB',
        description: 'The InfluxDB (InfluxQL) datasource holding reach_task_events',
        type: 'datasource',
        pluginId: 'influxdb',
        pluginName: 'InfluxDB',
      },
    ],
    __elements: {},
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: '10.0.0' },
      { type: 'datasource', id: 'influxdb', name: 'InfluxDB', version: '1.0.0' },
      { type: 'panel', id: 'bargauge', name: 'Bar gauge', version: '' },
      { type: 'panel', id: 'table', name: 'Table', version: '' },
      { type: 'panel', id: 'timeseries', name: 'Time series', version: '' },
    ],
    annotations: { list: [] },
    description:
      'Agent-Reach task events (reach_task_events): delivery success, receipt latency, execution time, completion rate. Queries: infra/influxdb/queries; definitions: docs/OBSERVABILITY.md.',
    editable: true,
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    id: null,
    links: [],
    panels,
    refresh: '30s',
    schemaVersion: 39,
    tags: ['agent-reach'],
    templating: {
      list: [
        {
          name: 'capability',
          label: 'Capability',
          type: 'query',
          datasource: DS,
          query: 'SHOW TAG VALUES FROM "reach_task_events" WITH KEY = "capability"',
          definition: 'SHOW TAG VALUES FROM "reach_task_events" WITH KEY = "capability"',
          refresh: 2,
          includeAll: true,
          allValue: '.*',
          multi: true,
          sort: 1,
          regex: '',
          current: { selected: true, text: ['All'], value: ['$__all'] },
          options: [],
          hide: 0,
        },
        {
          name: 'group',
          label: 'Group by',
          type: 'custom',
          query: 'capability,agent_id',
          includeAll: false,
          multi: false,
          current: { selected: true, text: 'capability', value: 'capability' },
          options: [
            { selected: true, text: 'capability', value: 'capability' },
            { selected: false, text: 'agent_id', value: 'agent_id' },
          ],
          hide: 0,
        },
      ],
    },
    time: { from: 'now-15m', to: 'now' },
    timepicker: {},
    timezone: '',
    title: 'Agent-Reach — task delivery',
    uid: 'agent-reach-tasks',
    version: 1,
    weekStart: '',
  };
}
