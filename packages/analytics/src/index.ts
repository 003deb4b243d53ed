/**
 * @agent-reach/analytics — reads `reach_task_events` back out of InfluxDB: the four figures every
 * dashboard shows and a task's timeline, with the very query files shipped in
 * infra/influxdb/queries (docs/OBSERVABILITY.md).
 * @packageDocumentation
 */
export {
  API_QUERIES,
  CHART_QUERIES,
  QUERIES_DIR,
  QUERY_NAMES,
  loadQuery,
  queryText,
  regexLiteral,
  renderQuery,
  stringLiteral,
  type QueryName,
  type QueryVars,
} from './queries.ts';
export {
  InvalidWindowError,
  isInvalidWindowError,
  MAX_WINDOW_S,
  parseWindow,
  timeFilter,
  WINDOW_PATTERN,
  type Window,
} from './window.ts';
export { influxSourceFrom, queryStatements, type InfluxSource, type Row } from './influx-source.ts';
export {
  fourFigures,
  fourFiguresStatements,
  type FourFigures,
  type FourFiguresOptions,
  type GroupBy,
  tenantCondition,
} from './four-figures.ts';
export {
  influxTaskTimeline,
  taskTimelineStatement,
  timelineFromInflux,
  type InfluxTaskTimeline,
  withGaps,
  type InfluxTimelineOptions,
  type StageRecord,
} from './timeline.ts';
export {
  capabilitySeries,
  DEFAULT_SERIES_POINTS,
  MAX_SERIES_POINTS,
  seriesStatements,
  seriesStep,
  type CapabilitySeries,
  type SeriesOptions,
} from './series.ts';
export {
  FigureGroup,
  LatencyFigure,
  SeriesPoint,
  SeriesReply,
  StatsReply,
  TimelineReply,
  TimelineStage,
} from './schemas.ts';
