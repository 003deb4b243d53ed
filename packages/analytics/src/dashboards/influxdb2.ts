import { loadQuery } from '../queries.ts';

type Json = Record<string, unknown>;

const API_VERSION = 'influxdata.com/v2alpha1';
const LABEL = 'agent-reach';

/** Flux files the InfluxDB 2 dashboard shows, each as one cell. */
export const FLUX_CHARTS = [
  'delivery-success',
  'completion-rate',
  'stage-counts',
  'failure-codes',
  'receipt-latency',
  'execution-time',
  'receipt-latency-over-time',
  'execution-time-over-time',
  'completions-over-time',
  'outcomes-over-time',
] as const;

/** Every shipped `.flux` file: the charts plus the analysts' task timeline. */
export const FLUX_FILES = [...FLUX_CHARTS, 'task-timeline'] as const;

const associations = [{ kind: 'Label', name: LABEL }];
const text = [{ hex: '#00C9FF', name: 'laser', type: 'text' }];
const lines = [
  { hex: '#31C0F6', name: 'Nineteen Eighty Four', type: 'scale' },
  { hex: '#A500A5', name: 'Nineteen Eighty Four', type: 'scale' },
  { hex: '#FF7E27', name: 'Nineteen Eighty Four', type: 'scale' },
];

function variable(name: string, spec: Json): Json {
  return {
    apiVersion: API_VERSION,
    kind: 'Variable',
    metadata: { name: `agent-reach-${name.toLowerCase()}` },
    spec: { name, associations, ...spec },
  };
}

function table(
  name: string,
  file: string,
  pos: { x: number; y: number; w: number },
  suffix = '',
): Json {
  return {
    kind: 'Table',
    name,
    queries: [{ query: loadQuery(file, 'flux') }],
    colors: text,
    decimalPlaces: 3,
    tableOptions: { verticalTimeAxis: true, wrapping: 'truncate' },
    fieldOptions: [
      { fieldName: '_start', visible: false },
      { fieldName: '_stop', visible: false },
      { fieldName: '_value', displayName: `value${suffix}`, visible: true },
    ],
    note: `Query: infra/influxdb/queries/${file}.flux`,
    xPos: pos.x,
    yPos: pos.y,
    width: pos.w,
    height: 4,
  };
}

function xy(
  name: string,
  file: string,
  pos: { x: number; y: number },
  unit: string,
  geom = 'line',
): Json {
  return {
    kind: 'Xy',
    name,
    queries: [{ query: loadQuery(file, 'flux') }],
    colors: lines,
    geom,
    position: geom === 'bar' ? 'stacked' : 'overlaid',
    axes: [
      { name: 'x', base: '10', scale: 'linear' },
      { name: 'y', base: '10', scale: 'linear', suffix: unit },
    ],
    xCol: '_time',
    yCol: '_value',
    note: `Query: infra/influxdb/queries/${file}.flux`,
    xPos: pos.x,
    yPos: pos.y,
    width: 6,
    height: 4,
  };
}

/**
 * The InfluxDB 2 template (`influx apply -f dashboard-template.json`): a label, the variables
 * `bucket`, `capability` (`*` = every capability) and `groupBy`, and the dashboard, whose every
 * cell runs a Flux file from infra/influxdb/queries unchanged.
 */
export function influxdb2Template(): Json[] {
  return [
    {
      apiVersion: API_VERSION,
      kind: 'Label',
      metadata: { name: LABEL },
      spec: { name: LABEL, color: '#326BBA' },
    },
    variable('bucket', {
      description: 'The bucket the events are written to (INFLUX_BUCKET, default reach)',
      type: 'constant',
      values: ['reach'],
    }),
    variable('capability', {
      description: 'One capability, or * for every capability',
      type: 'query',
      language: 'flux',
      query: [
        'import "array"',
        'import "influxdata/influxdb/schema"',
        '',
        'union(',
        '    tables: [',
        '        array.from(rows: [{_value: "*"}]),',
        '        schema.tagValues(bucket: v.bucket, tag: "capability", predicate: (r) => r._measurement == "reach_task_events"),',
        '    ],',
        ')',
      ].join('\n'),
    }),
    variable('groupBy', {
      description: 'Tag the figures are grouped by',
      type: 'constant',
      values: ['capability', 'agent_id'],
    }),
    {
      apiVersion: API_VERSION,
      kind: 'Dashboard',
      metadata: { name: 'agent-reach-tasks' },
      spec: {
        name: 'Agent-Reach — task delivery',
        description:
          'Delivery success, receipt latency, execution time and completion rate from reach_task_events (docs/OBSERVABILITY.md)',
        associations,
        charts: [
          table(
            'Delivery success rate — completed / (completed + failed + dead)',
            'delivery-success',
            { x: 0, y: 0, w: 4 },
          ),
          table(
            'Completion rate (per second over the range)',
            'completion-rate',
            { x: 4, y: 0, w: 4 },
            ' /s',
          ),
          table('Events by stage', 'stage-counts', { x: 8, y: 0, w: 2 }),
          table('Failures by error code', 'failure-codes', { x: 10, y: 0, w: 2 }),
          table(
            'Receipt latency, ms (sent → received)',
            'receipt-latency',
            { x: 0, y: 4, w: 6 },
            ' ms',
          ),
          table(
            'Execution time, ms (received → completed)',
            'execution-time',
            { x: 6, y: 4, w: 6 },
            ' ms',
          ),
          xy('Receipt latency over time', 'receipt-latency-over-time', { x: 0, y: 8 }, ' ms'),
          xy('Execution time over time', 'execution-time-over-time', { x: 6, y: 8 }, ' ms'),
          xy('Completions per minute', 'completions-over-time', { x: 0, y: 12 }, ''),
          xy('Delivery outcomes', 'outcomes-over-time', { x: 6, y: 12 }, '', 'bar'),
        ],
      },
    },
  ];
}
